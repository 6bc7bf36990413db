"""What the length claims share: a decoder-only run trained on lengths ``1..train_length`` and
scored beyond them by the ``length_accuracy`` probe (``probes/length.py``: exact match of the
whole target per test length, per-token accuracy beside it, their means over the lengths beyond
training under ``test/out_of_range``, and both numbers on ``val/main``), the measures and fit
guard read from it, and the intervals the decisions are drawn from.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
from pydantic import Field, model_validator

from genlab.claims.base import Claim, Decision
from genlab.claims.guards import Fit, Interval, NotApplicable, combine
from genlab.claims.measures import Derived, Final
from genlab.design import Design
from genlab.models.positional import PositionalName
from genlab.probes.length import OUT_OF_RANGE
from genlab.registry import Params
from genlab.report.plots import split_length

VAL = "val/main"


class LengthConfig(Params):
    """Lengths, data, transformer and budget of a length claim."""

    train_length: int = Field(8, ge=1, description="longest training input")
    test_max: int = Field(16, ge=2, description="longest test input")
    n_test_lengths: int = Field(4, ge=1, le=8)
    n_train: int = Field(3000, ge=10)
    n_test: int = Field(100, ge=1, description="test examples per length")
    positional: PositionalName = Field("none", description="positional encoding")
    d_model: int = Field(64, ge=4)
    n_layers: int = Field(2, ge=1)
    steps: int = Field(3000, ge=1, description="most optimiser steps (a run stops once it fits)")
    lr: float = Field(1e-3, gt=0)
    batch_size: int = Field(64, ge=1)
    seeds: int = Field(3, ge=1)

    @model_validator(mode="after")
    def _extrapolates(self) -> LengthConfig:
        if self.test_max <= self.train_length:
            raise ValueError(
                f"test_max ({self.test_max}) must be above train_length "
                f"({self.train_length}): the claim is about extrapolation"
            )
        return self


def lengths(cfg: LengthConfig) -> dict[str, int]:
    """The length and size params every length task takes."""
    return {
        "train_length": cfg.train_length,
        "test_max": cfg.test_max,
        "n_val": 200,
        "n_test_lengths": cfg.n_test_lengths,
        "n_train": cfg.n_train,
        "n_test": cfg.n_test,
    }


def transformer(cfg: LengthConfig, **params: Any) -> dict[str, Any]:
    """The decoder-only transformer of ``cfg`` (4 heads), ``params`` overriding."""
    return {
        "name": "transformer",
        "params": {
            "d_model": cfg.d_model,
            "n_heads": 4,
            "n_layers": cfg.n_layers,
            "positional": cfg.positional,
            **params,
        },
    }


def length_run(task: dict[str, Any], model: dict[str, Any], cfg: LengthConfig) -> dict[str, Any]:
    """A run spec: AdamW with clipped gradients, evaluated (val and test splits only) every
    tenth of the budget, stopped once the in-distribution exact match has held >= 0.99 for two
    evaluations (fitted; the budget is then not spent on an arm that is done)."""
    return {
        "task": task,
        "model": model,
        "steps": cfg.steps,
        "batch_size": cfg.batch_size,
        "optimizer": {"name": "adamw", "lr": cfg.lr, "grad_clip": 1.0},
        "eval": {
            "every": max(cfg.steps // 10, 1),
            "log_points": 0,
            "probes": [{"name": "length_accuracy"}],
        },
        "stop": [{"split": VAL, "metric": "accuracy", "threshold": 0.99, "patience": 2}],
        "checkpoint_every": max(cfg.steps // 2, 1),
    }


def at_length(i: int, metric: str = "accuracy") -> Derived:
    """``metric`` at the ``i``-th test length (ascending, from 0) at the last evaluation."""

    def value(m: pd.DataFrame) -> float:
        d = m[(m["metric"] == metric) & m["split"].map(lambda s: split_length(s) is not None)]
        if d.empty:
            return math.nan
        d = d[d["step"] == d["step"].max()]
        by_length = d.groupby(d["split"].map(split_length))["value"].mean().sort_index()
        return float(by_length.iloc[i]) if i < len(by_length) else math.nan

    return Derived(value, f"{metric} at test length number {i + 1} (ascending), last evaluation")


def reaches(name: str, values: Sequence[float], level: float, null: float = 0.0) -> Interval:
    """``values`` (one per seed) reach ``level``: the CI lies above ``null`` and the mean is at
    ``level``; refuted when the CI lies below ``level``."""
    return Interval.of(name, values, null=null, smallest=level)


def stays_below(name: str, values: Sequence[float], level: float, null: float) -> Interval:
    """``values`` stay at or below ``level``: the CI lies below ``null`` and the mean is at most
    ``level``; refuted when the CI lies above ``level``."""
    return Interval.of(name, values, null=null, smallest=level, above=False)


def paired(table: pd.DataFrame, key: str, a: Any, b: Any, measure: str = "ood") -> pd.Series:
    """Per seed, ``measure`` of arm ``a`` minus arm ``b`` (arms labelled by ``key``)."""
    wide = table.pivot_table(index="seed", columns=key, values=measure)
    return (wide[a] - wide[b]).dropna() if a in wide and b in wide else pd.Series(dtype=float)


def beats(table: pd.DataFrame, key: str, method: Any, base: Any, level: float, gap: float):
    """The two intervals of a method-vs-baseline claim: the method arm reaches ``level`` and beats
    the baseline by ``gap`` (paired by seed, CI above 0). The arms each reads: ``[method, [method,
    base]]`` (``LengthClaim.decision``'s ``reads``)."""
    return [
        reaches(f"ood({method})", table.loc[table[key] == method, "ood"], level),
        Interval.of(f"ood({method}) - ood({base})", paired(table, key, method, base), smallest=gap),
    ]


class LengthClaim(Claim):
    """Base of the length claims: the measures (exact match on ``val/main``, out-of-range exact
    match and per-token accuracy), the fit guard (every arm's val exact match >= 0.9: an arm that
    has not learned its training lengths says nothing about extrapolation), the floor declaration
    and the design of a transformer run per arm."""

    measures = {
        "val": Final(VAL),
        "ood": Final(OUT_OF_RANGE),
        "ood_token": Final(OUT_OF_RANGE, "token_accuracy"),
    }
    fit = Fit("val", 0.9)
    floor = NotApplicable(
        "floor",
        "the fit guard makes every arm learn the training lengths; "
        "the claimed arm at 0 beyond them is then the refutation",
    )

    @staticmethod
    def values(ood: float, fit: bool = True) -> dict[str, float]:
        """One run's synthetic measures (``Claim.synthetic``): out-of-range exact match ``ood``,
        per token a little above it, and val exact match 0.99, or 0.5 for an arm that did not
        fit."""
        return {"val": 0.99 if fit else 0.5, "ood": ood, "ood_token": min(1.0, ood + 0.2)}

    def design(self, cfg: LengthConfig, task: dict, axes: dict, model: dict | None = None):
        """The arms: ``task`` trained with ``model`` (default the transformer of ``cfg``) at each
        point of ``axes``, for ``cfg.seeds`` seeds."""
        base = length_run(task, model or transformer(cfg), cfg)
        return Design(base, axes, seeds=cfg.seeds).expand()

    def decision(
        self,
        ivs: Sequence[Interval],
        cfg: LengthConfig,
        table: pd.DataFrame,
        key: str,
        order: Sequence[Any],
        unit: str = "",
        reads: Sequence[Any] | None = None,
    ) -> Decision:
        """Reproduced when every interval holds, not reproduced when one is refuted; the
        estimates as statistics, the setting and each arm's seed means as the sentence.
        ``reads``: per interval, the arm (value of ``key``, or a list of them) it is drawn from; a
        refutation then reads only the arms of a refuted interval (``refuting``), so the fit
        guard judges those alone (an arm it does not read may not have fit). ``None``: every
        arm."""
        g = table.groupby(key, sort=False)[["ood", "ood_token", "val"]].mean()
        arms = ", ".join(
            f"{a} {g.loc[a, 'ood']:.3f} [token {g.loc[a, 'ood_token']:.3f}] (val "
            f"{g.loc[a, 'val']:.3f})"
            for a in order
            if a in g.index
        )
        sentence = (
            f"Out-of-range exact match (train <= {cfg.train_length}{unit}, test to "
            f"{cfg.test_max}, {cfg.positional}): {arms}."
        )
        verdict = combine([iv.verdict() for iv in ivs])
        read = None
        if verdict == "not reproduced" and reads is not None:
            read = self.refuting(
                table,
                key,
                [r for iv, r in zip(ivs, reads, strict=True) if iv.verdict() == "not reproduced"],
            )
        return Decision(verdict, {iv.name: iv.estimate for iv in ivs}, sentence, list(ivs), read)

    def refuting(self, table: pd.DataFrame, key: str, refuted: Sequence[Any]) -> list[dict]:
        """What a refutation reads (``Decision.reads``): one refuted interval is enough, so the
        arms (values of ``key``, or lists of them) of the first refuted interval whose arms all
        fit; if none does, those of every refuted interval (the fit guard then says which did
        not fit)."""
        arms = self.summary(table)
        sets = [list(r) if isinstance(r, list | tuple) else [r] for r in refuted]
        fits = [s for s in sets if self.fit.check(arms[arms[key].isin(s)], [key]).ok]
        return [{key: s} for s in (fits[:1] or sets)]
