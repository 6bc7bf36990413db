"""Grokking claims (catalogue cluster C1). Shared setup: ``presets/grokking.toml``.

``grokking.delayed_generalization`` (Power et al. 2022, #55): a small transformer fits a modular
arithmetic table long before it generalizes to the held-out part of the table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from pydantic import Field  # noqa: E402

from genlab.analysis.milestones import first_step, last_value  # noqa: E402
from genlab.claims import register  # noqa: E402
from genlab.claims.base import Claim, ClaimResult  # noqa: E402
from genlab.registry import Params  # noqa: E402
from genlab.report.plots import save_figure
from genlab.spec import RunSpec, load_spec_file, parse_spec  # noqa: E402
from genlab.tasks.modular import Operation  # noqa: E402

TRAIN, TEST = "train/main", "test/heldout"


class GrokkingConfig(Params):
    """The experiment a grokking claim runs: task, model size, optimiser, budget and seeds."""

    p: int = Field(97, ge=2)
    operation: Operation = "add"
    train_fraction: float = Field(0.5, gt=0, le=1)
    model: Literal["transformer", "mlp"] = "transformer"
    n_layers: int = Field(2, ge=1, description="transformer layers or MLP hidden layers")
    lr: float = Field(1e-3, gt=0)
    weight_decay: float = Field(1.0, ge=0)
    batch_size: int | None = Field(512, ge=1)
    steps: int = Field(6000, ge=1)
    seeds: int = Field(3, ge=3, description="at least 3, as the claim is stated over seeds")


def grokking_specs(cfg: GrokkingConfig) -> list[RunSpec]:
    """One run per seed (seed and data_seed both vary) from the grokking preset."""
    base = load_spec_file("grokking")
    base["task"]["params"].update(
        p=cfg.p, operation=cfg.operation, train_fraction=cfg.train_fraction
    )
    layers = {"n_layers": cfg.n_layers} if cfg.model == "transformer" else {"depth": cfg.n_layers}
    base["model"] = {"name": cfg.model, "params": layers}
    base["optimizer"].update(lr=cfg.lr, weight_decay=cfg.weight_decay)
    base.update(steps=cfg.steps, batch_size=cfg.batch_size)
    return [parse_spec({**base, "seed": s, "data_seed": s}) for s in range(cfg.seeds)]


def plot_seeds(metrics: pd.DataFrame, path: Path, title: str) -> Path:
    """Train (dashed) and test (solid) accuracy of every seed against step, log axis."""
    fig, ax = plt.subplots(figsize=(6, 4))
    acc = metrics[(metrics["metric"] == "accuracy") & (metrics["step"] > 0)]
    for i, (run_id, df) in enumerate(acc.groupby("run_id", sort=False)):
        color = f"C{i}"
        for split, style in ((TRAIN, "--"), (TEST, "-")):
            d = df[df["split"] == split].sort_values("step")
            ax.plot(d["step"], d["value"], style, color=color,
                    label=f"{run_id[:6]} {split.split('/')[0]}")  # fmt: skip
    ax.axhline(0.99, color="grey", lw=0.8)
    ax.set(xscale="log", xlabel="optimisation step", ylabel="accuracy", title=title, ylim=(0, 1.02))
    ax.legend(fontsize=7, frameon=False, ncol=2)
    return save_figure(fig, path)


class DelayedGeneralization(Claim):
    """Test accuracy reaches 99% long after train accuracy does (Power et al., #55)."""

    id = "grokking.delayed_generalization"
    family = "grokking"
    papers = (55,)
    statement = (
        "Over >= 3 seeds, every run reaches 99% test accuracy within the budget, and the steps to "
        "99% test accuracy are >= 3x the steps to 99% train accuracy."
    )
    Config = GrokkingConfig
    budgets = {"smoke": {"p": 31, "lr": 3e-3, "steps": 3000, "batch_size": None}, "full": {}}
    # stated before running; the abstract speaks of generalizing "well past" fitting
    MIN_DELAY = 3.0
    LEVEL = 0.99

    def specs(self, cfg: GrokkingConfig) -> list[RunSpec]:
        return grokking_specs(cfg)

    def judge(self, cfg: GrokkingConfig, runs: pd.DataFrame, metrics: pd.DataFrame) -> ClaimResult:
        t_train = first_step(metrics, TRAIN, "accuracy", self.LEVEL)
        t_test = first_step(metrics, TEST, "accuracy", self.LEVEL)
        table = pd.DataFrame({
            "run_id": runs["run_id"].values,
            "status": runs["status"].values,
        }).set_index("run_id")  # fmt: skip
        table["steps_to_train_99"] = t_train.reindex(table.index)
        table["steps_to_test_99"] = t_test.reindex(table.index)
        table["delay_ratio"] = table["steps_to_test_99"] / table["steps_to_train_99"]
        table["final_test_acc"] = last_value(metrics, TEST, "accuracy").reindex(table.index)
        ok = (table["status"] == "done") & (table["delay_ratio"] >= self.MIN_DELAY)
        n, n_ok = len(table), int(ok.sum())
        verdict = (
            "reproduced" if n_ok == n and n >= 3
            else "not reproduced" if 2 * n_ok <= n
            else "inconclusive"
        )  # fmt: skip
        stat = {
            "seeds": float(n),
            "seeds_passing": float(n_ok),
            "median_steps_to_train_99": float(table["steps_to_train_99"].median()),
            "median_steps_to_test_99": float(table["steps_to_test_99"].median()),
            "median_delay_ratio": float(table["delay_ratio"].median()),
            "min_final_test_acc": float(table["final_test_acc"].min()),
        }
        evidence = (
            f"{n_ok}/{n} seeds reached 99% test accuracy at >= {self.MIN_DELAY:g}x the steps to "
            f"99% train accuracy (median {stat['median_steps_to_test_99']:.0f} vs "
            f"{stat['median_steps_to_train_99']:.0f} steps; lowest final test accuracy "
            f"{stat['min_final_test_acc']:.3f}) on p={cfg.p}, train fraction {cfg.train_fraction}, "
            f"weight decay {cfg.weight_decay}, {cfg.steps} steps."
        )
        return ClaimResult(self.id, verdict, stat, evidence, table.reset_index())

    def figure(self, cfg: GrokkingConfig, metrics: pd.DataFrame, path: Path) -> Path | None:
        return plot_seeds(metrics, path, f"{self.id} (p={cfg.p}, frac={cfg.train_fraction})")


register(DelayedGeneralization())
