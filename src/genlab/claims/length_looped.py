"""``length.looped_depth``: Altabaa et al., "Recursive latent-space reasoning for OOD algorithmic
generalization" (catalogue #58), the input-adaptive recurrence half.

A weight-tied causal block looped once per reasoning step of the input (``looped_transformer``,
loops set by the number of operations in the program) against an ordinary decoder-only transformer
of ``n_layers`` blocks, both with the same width, positional encoding, data and budget, on
``computation_graph``: values mod ``p`` of every variable of random programs, trained on graph
depths ``1..train_length`` and tested on deeper graphs. The score is the ``length_accuracy``
probe's out-of-range exact match (every variable of a program right), mean over test depths and
seeds. Both arms get the same supervision: the value of every variable, intermediate ones
included. Not tested here: the paper's per-iteration supervision, discrete bottleneck and error
correction (not implemented), so a "not reproduced" speaks to recurrence with end-of-loop
supervision only. Thresholds are fixed below, before any run, from the issue.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import Field

from genlab.analysis.stats import mean_ci
from genlab.claims import register
from genlab.claims.base import Claim, ClaimResult, Verdict
from genlab.claims.length._legacy import (
    PE,
    ExtrapolationBudget,
    curves_from,
    final_metrics,
    fit_check,
    ood_table,
    plot_length_curves,
    run_spec_dict,
    spec_rows,
)
from genlab.spec import RunSpec, parse_spec

ARMS = ("transformer", "looped_transformer")


class LoopedConfig(ExtrapolationBudget):
    """Task, models and budget of ``length.looped_depth`` (lengths are graph depths)."""

    train_length: int = Field(3, ge=1, description="deepest training graph (the paper: 4)")
    test_max: int = Field(6, ge=2, description="deepest test graph (the paper: 8)")
    n_test_lengths: int = Field(3, ge=1)
    p: int = Field(7, ge=2, description="modulus (the paper: 23; 7 for a CPU budget)")
    ops: list[Literal["+", "-", "*"]] = Field(default_factory=lambda: ["+", "-", "*"])
    n_leaves: int = Field(3, ge=2)
    width: int = Field(1, ge=1, description="operations per depth level")
    n_names: int = Field(16, ge=2)
    n_train: int = Field(100_000, ge=10, description="large: 10k programs were memorized")
    n_layers: int = Field(4, ge=1, description="layers of the baseline transformer")
    steps: int = Field(5000, ge=1)
    lr: float = Field(2e-3, gt=0)
    batch_size: int = Field(32, ge=1)
    n_blocks: int = Field(1, ge=1, description="blocks in the looped model's shared group")
    loops_per_step: int = Field(2, ge=1, description="looped model: loops per operation")
    positional: PE = Field("t5", description="positional encoding of both models")
    seeds: int = Field(3, ge=1)


class LoopedDepth(Claim):
    """A looped weight-tied transformer extrapolates to deeper graphs than a plain one (#58)."""

    id = "length.looped_depth"
    family = "length"
    papers = (58,)
    statement = (
        "On modular arithmetic over random computational graphs trained on depths <= L and "
        "scored by exact match of every variable's value averaged over deeper test graphs (mean "
        "over seeds): the looped weight-tied transformer (one shared block, loops set by the "
        "number of operations in the input) reaches >= 0.5 and beats the ordinary transformer of "
        "the same width by >= 0.2. Not reproduced when it beats it by <= 0.05; inconclusive "
        "otherwise, and whenever an arm's mean in-distribution (val) exact match is below 0.9: "
        "an arm that has not learned the training depths says nothing about extrapolation."
    )
    Config = LoopedConfig
    LOOPED_OK, GAP_OK, GAP_FAIL, FIT = 0.5, 0.2, 0.05, 0.9
    budgets = {
        "smoke": {"train_length": 2, "test_max": 3, "n_test_lengths": 1, "p": 5, "ops": ["+"],
                  "n_leaves": 2, "width": 1, "n_names": 8, "n_train": 200, "n_test": 20,
                  "d_model": 32, "n_layers": 2, "steps": 40, "lr": 1e-3, "batch_size": 64,
                  "seeds": 1},
        # 3 seeds x 5000 steps took 1099 s on 2 cores, 2 seeds 685 s; this fits 10 minutes
        "full": {"seeds": 2, "steps": 4000},
    }  # fmt: skip

    def models(self, cfg: LoopedConfig) -> dict[str, dict]:
        common = {"d_model": cfg.d_model, "n_heads": 4, "positional": cfg.positional}
        return {
            "transformer": {"name": "transformer", "params": {**common, "n_layers": cfg.n_layers}},
            "looped_transformer": {"name": "looped_transformer", "params": {
                **common, "n_blocks": cfg.n_blocks, "loops_per_step": cfg.loops_per_step}},
        }  # fmt: skip

    def specs(self, cfg: LoopedConfig) -> list[RunSpec]:
        task = {"name": "computation_graph", "params": {
            "p": cfg.p, "ops": cfg.ops, "n_leaves": cfg.n_leaves, "width": cfg.width,
            "n_names": cfg.n_names, "train_length": cfg.train_length, "test_max": cfg.test_max,
            "n_test_lengths": cfg.n_test_lengths, "n_train": cfg.n_train, "n_val": 200,
            "n_test": cfg.n_test}}  # fmt: skip
        out = []
        for model in self.models(cfg).values():
            for seed in range(cfg.seeds):
                spec = run_spec_dict(task, model, cfg.steps, cfg.lr, cfg.batch_size, seed)
                out.append(parse_spec(spec))
        return out

    def verdict(self, looped: float, base: float, unfit: list[str]) -> Verdict:
        """The predicate fixed before running (see ``statement``)."""
        gap = looped - base
        if gap != gap or unfit:
            return "inconclusive"
        if looped >= self.LOOPED_OK and gap >= self.GAP_OK:
            return "reproduced"
        if gap <= self.GAP_FAIL:
            return "not reproduced"
        return "inconclusive"

    def judge(self, cfg: LoopedConfig, runs: pd.DataFrame, metrics: pd.DataFrame) -> ClaimResult:
        final = final_metrics(runs, metrics)
        if final.empty:
            return ClaimResult(self.id, "inconclusive", {}, "No finished runs to judge.", final)
        table = ood_table(final)
        labels = final.drop_duplicates("run_id").set_index("run_id")
        table["arm"] = labels["model"].map(lambda m: m["name"]).reindex(table.index)
        fit, unfit, fit_text = fit_check(final, table, "arm", ARMS, self.FIT, "depths")
        score = {a: mean_ci(table.loc[table["arm"] == a, "accuracy"].dropna().tolist())
                 for a in ARMS}  # fmt: skip
        tok = {a: float(table.loc[table["arm"] == a, "token_accuracy"].mean()) for a in ARMS}
        looped, base = score["looped_transformer"]["mean"], score["transformer"]["mean"]
        verdict = self.verdict(looped, base, unfit)
        stat = {f"ood_accuracy_{a}": s["mean"] for a, s in score.items()}
        stat |= {f"ood_accuracy_{a}_std": s["std"] for a, s in score.items()}
        stat |= {f"ood_token_accuracy_{a}": v for a, v in tok.items()}
        stat |= {f"val_accuracy_{a}": float(v) for a, v in fit.items()}
        stat["gap"] = looped - base
        text = ", ".join(f"{a} {s['mean']:.3f} ± {s['std']:.3f} (token {tok[a]:.3f})"
                         for a, s in score.items())  # fmt: skip
        evidence = (
            f"Out-of-range exact match, mean ± std over {cfg.seeds} seed(s) (p = {cfg.p}, ops "
            f"{''.join(cfg.ops)}, train depth <= {cfg.train_length}, test to {cfg.test_max}, "
            f"positional {cfg.positional}, {cfg.steps} steps): {text}; gap {looped - base:+.3f}. "
            f"Needs looped >= {self.LOOPED_OK} and gap >= {self.GAP_OK} (not reproduced at gap "
            f"<= {self.GAP_FAIL}). {fit_text}"
        )
        return ClaimResult(self.id, verdict, stat, evidence, table.reset_index())

    def figure(self, cfg: LoopedConfig, metrics: pd.DataFrame, path: Path) -> Path | None:
        final = final_metrics(spec_rows(self.specs(cfg)), metrics)
        if final.empty:
            return None
        final["arm"] = final["model"].map(lambda m: m["name"])
        final["panel"] = f"p = {cfg.p}, ops {''.join(cfg.ops)}"
        return plot_length_curves(
            curves_from(final, "panel", "arm"),
            path,
            f"{self.id}: exact match by graph depth",
            cfg.train_length,
        )


register(LoopedDepth())
