"""``grokking.moe_pathways``: Li, Fan & Zhou (2025, catalogue #38), scaled down.

In mixture-of-experts models, a sample's pathway is its sequence of expert choices across layers;
during grokking, pathways go from instance-specific to shared, and training-data-only pathway
metrics track generalization. Here: a tiny top-1 MoE transformer (2 layers, 4 experts) on modular
addition in a grokking regime (weight decay), with the ``pathways`` probe on the training set
(mean pairwise Hamming distance between pathways, and their normalised entropy as complexity).
Lost in scaling down: one-pass LLM pretraining and real downstream benchmarks.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from pydantic import Field

from genlab.analysis.milestones import first_step
from genlab.claims import register
from genlab.claims.base import Claim, ClaimResult
from genlab.claims.grokking_common import TEST, TRAIN, curves, verdict_from_passes
from genlab.registry import Params
from genlab.report.plots import save_figure
from genlab.spec import RunSpec, parse_spec

METRICS = ("pathway_distance", "pathway_entropy")


class MoEConfig(Params):
    """The MoE grokking run, one per seed."""

    p: int = Field(23, ge=5, le=200)
    train_fraction: float = Field(0.6, gt=0, lt=1)
    d_model: int = Field(64, ge=4)
    n_layers: int = Field(2, ge=1)
    n_experts: int = Field(4, ge=1)
    lr: float = Field(3e-3, gt=0)
    weight_decay: float = Field(1.0, ge=0)
    steps: int = Field(3000, ge=1)
    seeds: int = Field(3, ge=1)


class MoEPathways(Claim):
    """Pathway distance and complexity fall as a tiny MoE transformer groks (Li et al., #38)."""

    id = "grokking.moe_pathways"
    family = "grokking"
    papers = (38,)
    statement = (
        "In every seed the MoE transformer groks (>= 90% test accuracy), and both training-set "
        "pathway distance and pathway entropy are lower when test accuracy first reaches 90% than "
        "when train accuracy first reached 99%, with Spearman correlation <= -0.5 against test "
        "accuracy over the evaluations from train fit on. A seed that does not grok fails."
    )
    Config = MoEConfig
    budgets = {"smoke": {"seeds": 1, "steps": 2000}, "full": {}}
    MAX_RHO, LEVEL = -0.5, 0.9

    def specs(self, cfg: MoEConfig) -> list[RunSpec]:
        model = {"d_model": cfg.d_model, "n_layers": cfg.n_layers, "n_experts": cfg.n_experts}
        return [
            parse_spec(
                {
                    "task": {
                        "name": "modular_arithmetic",
                        "params": {"p": cfg.p, "train_fraction": cfg.train_fraction},
                    },
                    "model": {"name": "moe_transformer", "params": model},
                    "optimizer": {"name": "adamw", "lr": cfg.lr, "weight_decay": cfg.weight_decay},
                    "steps": cfg.steps,
                    "checkpoint_every": 100_000,
                    "eval": {
                        "every": max(1, cfg.steps // 60),
                        "log_points": 20,
                        "probes": [{"name": "accuracy"}, {"name": "pathways"}],
                    },
                    "seed": s,
                    "data_seed": s,
                }
            )  # fmt: skip
            for s in range(cfg.seeds)
        ]

    def judge(self, cfg: MoEConfig, runs: pd.DataFrame, metrics: pd.DataFrame) -> ClaimResult:
        ids = [s.run_id for s in self.specs(cfg)]
        t = pd.DataFrame({"run_id": ids}).set_index("run_id")
        t["t_train_99"] = first_step(metrics, TRAIN, "accuracy", 0.99).reindex(t.index)
        t["t_test_90"] = first_step(metrics, TEST, "accuracy", self.LEVEL).reindex(t.index)
        acc = curves(metrics, TEST, "accuracy")
        ok = t["t_test_90"].notna()
        for m in METRICS:
            wide = curves(metrics, TRAIN, m)
            at_fit, at_grok, rho = [], [], []
            for rid, row in t.iterrows():
                if rid not in wide or pd.isna(row["t_train_99"]):
                    (
                        at_fit.append(float("nan")),
                        at_grok.append(float("nan")),
                        rho.append(float("nan")),
                    )
                    continue
                c = wide[rid].dropna()
                at_fit.append(float(c.get(row["t_train_99"], float("nan"))))
                at_grok.append(float(c.get(row["t_test_90"], float("nan"))))
                after = c.index[c.index >= row["t_train_99"]]
                pair = pd.DataFrame({"m": c[after], "a": acc[rid].reindex(after)}).dropna()
                rho.append(float(pair["m"].corr(pair["a"], method="spearman")))
            t[f"{m}_at_fit"], t[f"{m}_at_grok"], t[f"{m}_spearman"] = at_fit, at_grok, rho
            ok &= (t[f"{m}_at_grok"] < t[f"{m}_at_fit"]) & (t[f"{m}_spearman"] <= self.MAX_RHO)
        t["passes"] = ok
        n, n_ok = len(t), int(ok.sum())
        stat = {"seeds": float(n), "seeds_passing": float(n_ok),
                "seeds_grokked": float(t["t_test_90"].notna().sum())}  # fmt: skip
        for m in METRICS:
            stat[f"median_{m}_spearman"] = float(t[f"{m}_spearman"].median())
            stat[f"median_{m}_at_fit"] = float(t[f"{m}_at_fit"].median())
            stat[f"median_{m}_at_grok"] = float(t[f"{m}_at_grok"].median())
        evidence = (
            f"{n_ok}/{n} seeds pass ({stat['seeds_grokked']:.0f} grokked); median pathway distance "
            f"{stat['median_pathway_distance_at_fit']:.3f} at train fit -> "
            f"{stat['median_pathway_distance_at_grok']:.3f} at 90% test (Spearman with test acc "
            f"{stat['median_pathway_distance_spearman']:.2f}); entropy "
            f"{stat['median_pathway_entropy_at_fit']:.3f} -> "
            f"{stat['median_pathway_entropy_at_grok']:.3f} "
            f"(Spearman {stat['median_pathway_entropy_spearman']:.2f}); p={cfg.p}, "
            f"{cfg.n_experts} experts, wd {cfg.weight_decay}, {cfg.steps} steps."
        )
        return ClaimResult(self.id, verdict_from_passes(n_ok, n), stat, evidence, t.reset_index())

    def figure(self, cfg: MoEConfig, metrics: pd.DataFrame, path: Path) -> Path | None:
        acc = curves(metrics, TEST, "accuracy")
        if acc.empty:
            return None
        fig, ax = plt.subplots(figsize=(6.5, 4))
        ax2 = ax.twinx()
        for i, rid in enumerate(acc.columns):
            ax.plot(acc.index, acc[rid], color=f"C{i}", lw=1.5)
            for m, style in zip(METRICS, ("--", ":"), strict=True):
                w = curves(metrics, TRAIN, m)
                if rid in w:
                    ax2.plot(w.index, w[rid], style, color=f"C{i}", lw=1)
        ax.set(xscale="log", xlabel="step", ylabel="test accuracy (solid)", ylim=(0, 1.02),
               title=f"{self.id}: pathways vs test accuracy")  # fmt: skip
        ax2.set(ylabel="train pathway distance (--) / entropy (:)", ylim=(0, 1.02))
        return save_figure(fig, path)


register(MoEPathways())
