"""Measures: how a claim reads one number per run from the store's long-format metrics.

A measure is called with one run's metrics (columns ``step, split, metric, value``) and returns a
float (NaN when the run never logged what it asks for). ``split`` may be a glob (``test/*``,
``val/*``): the value at a step is then the mean over the matching splits, as DomainBed averages
its validation environments. Every measure describes itself for ``genlab claims show``.

    Final("test/heldout", "accuracy")                    the last evaluation
    AtBest("test/*", "accuracy", select="val/*")         at the step of best validation accuracy
    FirstStep("test/heldout", "accuracy", 0.99)          the first step reaching a level
    Extreme("train/main", "loss", "min")                 the best value over training
    Derived(lambda m: ..., "what it is")                 anything else computed from the store
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

import pandas as pd


def series(m: pd.DataFrame, split: str, metric: str) -> pd.Series:
    """``metric`` on ``split`` (a name or a glob: the mean over matches) by step. Step 0, the
    untrained model, is dropped when later steps exist."""
    rows = m[(m["metric"] == metric) & m["split"].map(lambda s: fnmatchcase(s, split))]
    if rows.empty:
        return pd.Series(dtype=float)
    s = rows.groupby("step")["value"].mean().sort_index()
    return s[s.index > 0] if (s.index > 0).any() else s


class Measure:
    """Base: one float per run from its metrics."""

    def __call__(self, m: pd.DataFrame) -> float:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Final(Measure):
    """The value at the run's last evaluation."""

    split: str
    metric: str = "accuracy"

    def __call__(self, m: pd.DataFrame) -> float:
        s = series(m, self.split, self.metric)
        return float(s.iloc[-1]) if len(s) else math.nan

    def describe(self) -> str:
        return f"{self.metric} on {self.split} at the last evaluation"


@dataclass(frozen=True)
class AtBest(Measure):
    """The value at the step where ``select_metric`` on ``select`` is best (ties: earliest):
    training-domain validation when ``select`` is ``val/*`` (DomainBed's default rule)."""

    split: str
    metric: str = "accuracy"
    select: str = "val/*"
    select_metric: str = "accuracy"
    mode: Literal["max", "min"] = "max"

    def __call__(self, m: pd.DataFrame) -> float:
        score = series(m, self.select, self.select_metric)
        values = series(m, self.split, self.metric)
        score = score[score.index.isin(values.index)]
        if score.empty:
            return math.nan
        step = score.idxmax() if self.mode == "max" else score.idxmin()
        return float(values[step])

    def describe(self) -> str:
        best = "highest" if self.mode == "max" else "lowest"
        return (
            f"{self.metric} on {self.split} at the step of {best} {self.select_metric} "
            f"on {self.select}"
        )


@dataclass(frozen=True)
class FirstStep(Measure):
    """The first evaluated step at which the value reaches ``level`` (``below``: falls to it);
    NaN when it never does."""

    split: str
    metric: str
    level: float
    below: bool = False

    def __call__(self, m: pd.DataFrame) -> float:
        s = series(m, self.split, self.metric)
        hit = s[s <= self.level] if self.below else s[s >= self.level]
        return float(hit.index[0]) if len(hit) else math.nan

    def describe(self) -> str:
        rel = "<=" if self.below else ">="
        return f"first step with {self.metric} on {self.split} {rel} {self.level:g}"


@dataclass(frozen=True)
class Extreme(Measure):
    """The highest (``max``) or lowest (``min``) value over the run's evaluations."""

    split: str
    metric: str
    mode: Literal["max", "min"] = "max"

    def __call__(self, m: pd.DataFrame) -> float:
        s = series(m, self.split, self.metric)
        return float(s.max() if self.mode == "max" else s.min()) if len(s) else math.nan

    def describe(self) -> str:
        return f"{self.mode} of {self.metric} on {self.split} over training"


@dataclass(frozen=True)
class Derived(Measure):
    """Any other function of one run's metrics, with the sentence that says what it is."""

    fn: Callable[[pd.DataFrame], float]
    text: str

    def __call__(self, m: pd.DataFrame) -> float:
        return float(self.fn(m))

    def describe(self) -> str:
        return self.text


def measure_table(measures: dict[str, Measure], metrics: pd.DataFrame, run_ids: list[str]):
    """One row per run id, one column per measure (NaN for runs without metrics)."""
    groups = dict(tuple(metrics.groupby("run_id", sort=False))) if len(metrics) else {}
    empty = pd.DataFrame(columns=["step", "split", "metric", "value"])
    rows = {r: {k: ms(groups.get(r, empty)) for k, ms in measures.items()} for r in run_ids}
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(measures))


__all__ = [
    "AtBest",
    "Derived",
    "Extreme",
    "Final",
    "FirstStep",
    "Measure",
    "measure_table",
    "series",
]
