"""``grokking.moe_pathways`` (Li, Fan & Zhou 2025, #38), scaled down: in a mixture-of-experts
model a sample's pathway is its sequence of expert choices across layers; as the model groks,
training samples' pathways go from instance-specific to shared, and these training-data-only
metrics track generalization.

Here: a top-1 MoE transformer (2 layers, 4 experts) on modular addition mod 23 in a grokking regime
(weight decay 1, the leak-free split, 75% of the table), with the ``pathways`` probe on the
training set (mean pairwise Hamming distance between pathways; their normalised entropy as
complexity). Runs stop a few evaluations after test accuracy holds 90%: the claim is about the
transition. Lost: one-pass LLM pretraining, the paper's edit distance and consistency metrics,
real downstream benchmarks.

Measured history (why 75% of the table): docs/grokking.md (grokking.moe_pathways).
"""

from __future__ import annotations

import math

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Claim, Control, Decision, Ref
from genlab.claims.grokking._common import TEST, TRAIN
from genlab.claims.guards import Fit, NotApplicable, count_verdict
from genlab.claims.measures import Derived, Extreme, FirstStep, series
from genlab.design import Design
from genlab.registry import Params
from genlab.report.claim_figures import Curves

FIT, GROK = 0.99, 0.9


def pathway(metric: str, what: str) -> Derived:
    """``metric`` (a ``pathways`` probe output) at train fit, at 90% test accuracy, or its
    Spearman correlation with test accuracy over the evaluations from train fit on."""

    def fn(m: pd.DataFrame) -> float:
        path, train, test = (series(m, s, k) for s, k in ((TRAIN, metric), (TRAIN, "accuracy"),
                                                          (TEST, "accuracy")))  # fmt: skip
        fit, grok = train[train >= FIT].index.min(), test[test >= GROK].index.min()
        if what == "rho":
            after = path[path.index >= fit] if not math.isnan(fit) else path.iloc[:0]
            return float(after.corr(test.reindex(after.index), method="spearman"))
        step = fit if what == "fit" else grok
        return float(path.get(step, math.nan)) if not math.isnan(step) else math.nan

    return Derived(fn, {"fit": f"{metric} at train fit", "grok": f"{metric} at 90% test",
                        "rho": f"Spearman of {metric} with test accuracy from fit on"}[what])  # fmt: skip


class MoEConfig(Params):
    """The MoE grokking run, one per seed."""

    p: int = Field(23, ge=5, le=200)
    train_fraction: float = Field(0.75, gt=0, lt=1)
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
    papers = (Ref(38, "Li, Fan & Zhou 2025", "Where to find grokking in LLM pretraining? Monitor "
                  "memorization-to-generalization without test"),)  # fmt: skip
    statement = (
        "In every seed of a MoE transformer that groks (train 99%, then test 90%), training-set "
        "pathway distance and pathway entropy are both lower when test accuracy first reaches 90% "
        "than when train accuracy first reached 99%, with a Spearman correlation <= -0.5 against "
        "test accuracy over the evaluations from train fit on."
    )
    Config = MoEConfig
    budgets = {"smoke": {"seeds": 1}, "full": {}}
    MAX_RHO = -0.5
    METRICS = ("pathway_distance", "pathway_entropy")
    measures = {"train": Extreme(TRAIN, "accuracy"), "test": Extreme(TEST, "accuracy"),
                "t_fit": FirstStep(TRAIN, "accuracy", FIT), "t_grok": FirstStep(TEST, "accuracy", GROK),
                **{f"{m[8:]}_{w}": pathway(m, w) for m in METRICS for w in ("fit", "grok", "rho")}}  # fmt: skip
    fit = Fit("train", FIT)
    extra_guards = (Fit("test", GROK),)  # it grokked: the claim is about pathways while grokking
    floor = NotApplicable("floor", "one arm; not grokking is caught by the test-accuracy guard")
    figure = Curves((TRAIN,), metric="pathway_distance")
    controls = {
        "negative": Control({"n_experts": 1}, "not reproduced", "one expert: every pathway is "
                            "the same, so nothing about routing can track the grokking", slow=True),
        "positive": Control({}, "reproduced", "the smoke budget", slow=True),
    }  # fmt: skip

    def arms(self, cfg: MoEConfig):
        base = {"task": {"name": "modular_arithmetic",
                         "params": {"p": cfg.p, "train_fraction": cfg.train_fraction}},
                "model": {"name": "moe_transformer", "params": {
                    "d_model": cfg.d_model, "n_layers": cfg.n_layers, "n_experts": cfg.n_experts}},
                "optimizer": {"name": "adamw", "lr": cfg.lr, "weight_decay": cfg.weight_decay},
                "steps": cfg.steps, "checkpoint_every": 100_000,
                "eval": {"every": max(1, cfg.steps // 60), "log_points": 20,
                         "probes": [{"name": "accuracy"}, {"name": "pathways"}]},
                "stop": [{"split": TEST, "metric": "accuracy", "threshold": GROK, "patience": 6}]}  # fmt: skip
        return Design(base, seeds=cfg.seeds).expand()

    def decide(self, cfg: MoEConfig, table: pd.DataFrame) -> Decision:
        ok = table["status"] == "done"
        for m in ("distance", "entropy"):
            ok &= (table[f"{m}_grok"] < table[f"{m}_fit"]) & (table[f"{m}_rho"] <= self.MAX_RHO)
        n, k = len(table), int(ok.sum())
        med = table.median(numeric_only=True)
        stats = {"seeds": n, "seeds_passing": k} | {
            f"median_{c}": med[c] for c in table.columns if c.startswith(("distance", "entropy"))
        }
        sentence = (f"{k}/{n} seeds pass; median pathway distance {med['distance_fit']:.3f} at "
                    f"train fit -> {med['distance_grok']:.3f} at 90% test (Spearman with test "
                    f"accuracy {med['distance_rho']:.2f}); entropy {med['entropy_fit']:.3f} -> "
                    f"{med['entropy_grok']:.3f} (Spearman {med['entropy_rho']:.2f}); p={cfg.p}, "
                    f"{cfg.n_experts} experts, weight decay {cfg.weight_decay}.")  # fmt: skip
        return Decision(count_verdict(k, n), stats, sentence)


register(MoEPathways())
