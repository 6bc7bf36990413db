"""``grokking.data_fraction``: Power et al., "Grokking: Generalization Beyond Overfitting on Small
Algorithmic Datasets" (2022, catalogue #55): smaller training fractions of the operation table need
more optimisation steps to generalize, and below some fraction the model does not generalize within
the budget.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

import matplotlib.pyplot as plt
import pandas as pd
from pydantic import Field

from genlab.analysis.milestones import first_step
from genlab.claims import register
from genlab.claims.base import Claim, ClaimResult
from genlab.claims.grokking_common import TEST, TRAIN, modular_base
from genlab.registry import Params
from genlab.report.plots import save_figure
from genlab.spec import RunSpec, parse_spec
from genlab.tasks.modular import Operation


class FractionConfig(Params):
    """Train fractions swept on the grokking preset (full batch, stop at 99% test accuracy).

    The catalogue row allows the 2-layer transformer or an embedding-MLP; the MLP is the default
    because the transformer's full sweep does not fit 10 minutes on a loaded 2-core machine.
    """

    p: int = Field(23, ge=5, le=200)
    operation: Operation = "add"
    fractions: list[float] = Field([0.2, 0.3, 0.4, 0.5, 0.7], min_length=2)
    model: Literal["transformer", "mlp"] = Field(
        "mlp", description="embedding-MLP (fast) or the preset's 2-layer transformer (Power et al.)"
    )
    lr: float = Field(1e-2, gt=0)
    weight_decay: float = Field(1.0, ge=0)
    steps: int = Field(3000, ge=1)
    seeds: int = Field(3, ge=1)


class DataFraction(Claim):
    """Steps to generalize fall as the training fraction grows (Power et al., #55)."""

    id = "grokking.data_fraction"
    family = "grokking"
    papers = (55,)
    statement = (
        "Over train fractions of the modular table, the median (over seeds) steps to 99% test "
        "accuracy strictly fall as the fraction grows among fractions that generalize (>= 2 of "
        "them, never more steps at a larger fraction), and the smallest fraction does not "
        "generalize within the budget. Falling steps without a failing fraction: inconclusive."
    )
    Config = FractionConfig
    budgets = {
        "smoke": {
            "p": 23,
            "fractions": [0.2, 0.5, 0.8],
            "model": "mlp",
            "lr": 1e-2,
            "steps": 1500,
            "seeds": 1,
        },
        "full": {},
    }
    LEVEL = 0.99

    def specs(self, cfg: FractionConfig) -> list[RunSpec]:
        out = []
        for f in sorted(cfg.fractions):
            base = modular_base(cfg.p, f, cfg.steps, cfg.operation)
            if cfg.model == "mlp":
                base["model"] = {
                    "name": "mlp",
                    "params": {"width": 128, "depth": 2, "embed_dim": 16},
                }
            base["optimizer"].update(lr=cfg.lr, weight_decay=cfg.weight_decay)
            base["stop"] = [
                {"split": TEST, "metric": "accuracy", "threshold": self.LEVEL, "patience": 2}
            ]
            base["checkpoint_every"] = 100_000
            out += [parse_spec({**base, "seed": s, "data_seed": s}) for s in range(cfg.seeds)]
        return out

    def _table(self, cfg: FractionConfig, metrics: pd.DataFrame) -> pd.DataFrame:
        rows = [
            {"run_id": s.run_id, "fraction": s.task.params["train_fraction"], "seed": s.seed}
            for s in self.specs(cfg)
        ]
        t = pd.DataFrame(rows).set_index("run_id")
        t["steps_to_train_99"] = first_step(metrics, TRAIN, "accuracy", self.LEVEL).reindex(t.index)
        t["steps_to_test_99"] = first_step(metrics, TEST, "accuracy", self.LEVEL).reindex(t.index)
        return t

    def judge(self, cfg: FractionConfig, runs: pd.DataFrame, metrics: pd.DataFrame) -> ClaimResult:
        t = self._table(cfg, metrics)
        med = t["steps_to_test_99"].fillna(math.inf).groupby(t["fraction"]).median().sort_index()
        finite = med[med < math.inf]
        never_more = all(b <= a for a, b in zip(med.values, med.values[1:], strict=False))
        strictly = len(finite) >= 2 and all(
            b < a for a, b in zip(finite.values, finite.values[1:], strict=False)
        )
        falls = never_more and strictly
        threshold = bool(med.iloc[0] == math.inf)
        verdict = (
            "reproduced" if falls and threshold else "inconclusive" if falls else "not reproduced"
        )
        stat = {f"median_steps_to_test_99@{f:g}": float(v) for f, v in med.items()}
        stat |= {
            "steps_fall_with_fraction": float(falls),
            "smallest_fraction_fails": float(threshold),
        }
        evidence = (
            "median steps to 99% test accuracy by train fraction: "
            + ", ".join(f"{f:g}: {v:g}" for f, v in med.items())
            + f" (inf = not in {cfg.steps} steps; {cfg.seeds} seed(s), {cfg.model}, p={cfg.p}, "
            f"wd {cfg.weight_decay}); falls with fraction: {falls}; "
            f"smallest fraction fails: {threshold}."
        )
        return ClaimResult(self.id, verdict, stat, evidence, t.reset_index())

    def figure(self, cfg: FractionConfig, metrics: pd.DataFrame, path: Path) -> Path | None:
        t = self._table(cfg, metrics)
        fig, ax = plt.subplots(figsize=(5.5, 4))
        for col, label, mk in (
            ("steps_to_train_99", "train 99%", "s"),
            ("steps_to_test_99", "test 99%", "o"),
        ):
            d = t[col].fillna(cfg.steps * 1.5)
            ax.scatter(t["fraction"], d, marker=mk, label=label, alpha=0.7)
            ax.plot(
                *zip(*sorted(d.groupby(t["fraction"]).median().items()), strict=True), alpha=0.5
            )
        ax.axhline(cfg.steps, color="grey", lw=0.8, ls="--")
        ax.text(min(cfg.fractions), cfg.steps * 1.05, "budget (points above: never)", fontsize=7)
        ax.set(
            yscale="log",
            xlabel="training fraction of the table",
            ylabel="steps to 99% accuracy",
            title=f"{self.id} (p={cfg.p}, {cfg.model})",
        )
        ax.legend(frameon=False)
        return save_figure(fig, path)


register(DataFraction())
