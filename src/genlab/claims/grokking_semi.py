"""``grokking.semi_grokking``: Varma et al., "Explaining grokking through circuit efficiency" (2023,
catalogue #116).

Near the critical dataset size, where memorizing and generalizing circuits are about equally
efficient, a network trained from scratch with weight decay generalizes late and only partially:
its test accuracy rises long after it fits the training set and settles at an intermediate level.
Embedding-MLP on modular addition, full batch, AdamW, training fractions around the critical size.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from pydantic import Field

from genlab.analysis.milestones import first_step, last_value
from genlab.claims import register
from genlab.claims.base import Claim, ClaimResult
from genlab.claims.grokking_common import TEST, TRAIN, curves
from genlab.registry import Params
from genlab.report.plots import save_figure
from genlab.spec import RunSpec, parse_spec


class SemiConfig(Params):
    """Training fractions near the critical size, trained from scratch."""

    p: int = Field(23, ge=5, le=200)
    fractions: list[float] = Field([0.35, 0.4, 0.45], min_length=1)
    width: int = Field(128, ge=1)
    embed_dim: int = Field(16, ge=1)
    lr: float = Field(1e-2, gt=0)
    weight_decay: float = Field(1.0, ge=0)
    steps: int = Field(6000, ge=10)
    seeds: int = Field(3, ge=1)


class SemiGrokking(Claim):
    """Late rise to partial test accuracy near the critical dataset size (Varma et al., #116)."""

    id = "grokking.semi_grokking"
    family = "grokking"
    papers = (116,)
    statement = (
        "At some training fraction, in the median seed, the final test accuracy is partial "
        "(between 20% and 90%), it rose late (first reaching half its final value >= 3x the steps "
        "to 99% train accuracy) and has settled (it moved < 0.05 over the last fifth of training). "
        "No such fraction: not reproduced."
    )
    Config = SemiConfig
    budgets = {"smoke": {"fractions": [0.4, 0.45], "seeds": 1, "steps": 3000}, "full": {}}
    LOW, HIGH, MIN_DELAY, MAX_DRIFT = 0.2, 0.9, 3.0, 0.05

    def specs(self, cfg: SemiConfig) -> list[RunSpec]:
        return [
            parse_spec(
                {
                    "task": {
                        "name": "modular_arithmetic",
                        "params": {"p": cfg.p, "train_fraction": f},
                    },
                    "model": {
                        "name": "mlp",
                        "params": {"width": cfg.width, "depth": 2, "embed_dim": cfg.embed_dim},
                    },
                    "optimizer": {"name": "adamw", "lr": cfg.lr, "weight_decay": cfg.weight_decay},
                    "steps": cfg.steps,
                    "checkpoint_every": 100_000,
                    "eval": {
                        "every": max(1, cfg.steps // 50),
                        "log_points": 20,
                        "probes": [{"name": "accuracy"}],
                    },
                    "seed": s,
                    "data_seed": s,
                }
            )  # fmt: skip
            for f in sorted(cfg.fractions)
            for s in range(cfg.seeds)
        ]

    def _table(self, cfg: SemiConfig, metrics: pd.DataFrame) -> pd.DataFrame:
        specs = self.specs(cfg)
        t = pd.DataFrame(
            [{"run_id": s.run_id, "fraction": s.task.params["train_fraction"], "seed": s.seed}
             for s in specs]
        ).set_index("run_id")  # fmt: skip
        t["steps_to_train_99"] = first_step(metrics, TRAIN, "accuracy", 0.99).reindex(t.index)
        t["final_test_acc"] = last_value(metrics, TEST, "accuracy").reindex(t.index)
        acc = curves(metrics, TEST, "accuracy")
        half, drift = [], []
        for rid, final in t["final_test_acc"].items():
            c = acc[rid].dropna() if rid in acc else pd.Series(dtype=float)
            hit = c[c >= final / 2] if len(c) else c
            half.append(float(hit.index.min()) if len(hit) else float("nan"))
            tail = c[c.index >= 0.8 * cfg.steps]
            drift.append(float(tail.max() - tail.min()) if len(tail) else float("nan"))
        t["steps_to_half_final_test"] = half
        t["test_drift_last_fifth"] = drift
        t["delay_ratio"] = t["steps_to_half_final_test"] / t["steps_to_train_99"]
        return t

    def judge(self, cfg: SemiConfig, runs: pd.DataFrame, metrics: pd.DataFrame) -> ClaimResult:
        t = self._table(cfg, metrics)
        med = t.groupby("fraction")[["final_test_acc", "delay_ratio", "test_drift_last_fifth"]]
        med = med.median().sort_index()
        med["semi"] = (
            med["final_test_acc"].between(self.LOW, self.HIGH)
            & (med["delay_ratio"] >= self.MIN_DELAY)
            & (med["test_drift_last_fifth"] < self.MAX_DRIFT)
        )
        semi = med.index[med["semi"]].tolist()
        verdict = "reproduced" if semi else "not reproduced"
        stat = {f"median_final_test_acc@{f:g}": float(v) for f, v in med["final_test_acc"].items()}
        stat |= {f"median_delay_ratio@{f:g}": float(v) for f, v in med["delay_ratio"].items()}
        stat["semi_grokking_fractions"] = float(len(semi))
        evidence = (
            "median final test accuracy / delay ratio / drift over the last fifth by fraction: "
            + ", ".join(
                f"{f:g}: {r.final_test_acc:.3f} / {r.delay_ratio:.1f} / "
                f"{r.test_drift_last_fifth:.3f}"
                for f, r in med.iterrows()
            )
            + f"; semi-grokking at {semi or 'no fraction'} (p={cfg.p}, wd {cfg.weight_decay}, "
            f"{cfg.steps} steps, {cfg.seeds} seed(s))."
        )
        return ClaimResult(self.id, verdict, stat, evidence, t.reset_index())

    def figure(self, cfg: SemiConfig, metrics: pd.DataFrame, path: Path) -> Path | None:
        t = self._table(cfg, metrics)
        acc, tr = curves(metrics, TEST, "accuracy"), curves(metrics, TRAIN, "accuracy")
        fig, ax = plt.subplots(figsize=(6.5, 4))
        fracs = sorted(cfg.fractions)
        for rid, row in t.iterrows():
            if rid not in acc:
                continue
            color = plt.cm.viridis(fracs.index(row["fraction"]) / max(1, len(fracs) - 1))
            label = f"frac {row['fraction']:g}" if row["seed"] == 0 else None
            ax.plot(acc.index, acc[rid], color=color, label=label)
            ax.plot(tr.index, tr[rid], ":", color=color, lw=0.8)
        ax.axhspan(self.LOW, self.HIGH, color="grey", alpha=0.1)
        ax.set(xscale="log", xlabel="step", ylabel="accuracy (solid test, dotted train)",
               ylim=(0, 1.02), title=f"{self.id} (p={cfg.p}; band: partial)")  # fmt: skip
        ax.legend(fontsize=8, frameon=False)
        return save_figure(fig, path)


register(SemiGrokking())
