"""``diag.feature_diversity`` (catalogue #81, "Feature diversity as a scaling factor in
self-supervised CNNs", paper unidentified): in SSL-trained CNNs the last layer is the most
diversified, diversity drops over training epochs, and it grows with width.

Substrate (the catalogue's CPU design): SimCLR (``methods/simclr.py``: shifts of up to 1 pixel and
Gaussian noise, NT-Xent, Adam) on 1,000 scikit-learn digits, a CNN of three conv-BN-ReLU blocks of
``width`` channels each, width in {8, 16, 32, 64}, one run per width and seed. Diversity
(``probes/diversity.py``, the catalogue's definition; the paper's own is not known) is the mean
pairwise ``1 - cos`` of the neurons' activation vectors (each channel's position-averaged output
over 500 held-out digits), per block, at every evaluation; a linear probe on the last block's
features (``layer_probes``) checks that SSL learned something.

The three parts, each over the runs with a 95% CI (all must hold): (a) at the end, the judged
layer's diversity minus the largest of the other layers' is > 0; (b) per run, Spearman's rho between
the evaluation step (after step 0) and the judged layer's diversity is < 0; (c) per seed, Spearman's
rho between width and the judged layer's final diversity is > 0. Negative control
(``layer="first"``, widths 16-64): the first block judged as the one most diversified; the paper
finds diversity highest at the last layer, so the first must not be. Issue #30: it judged the
claim's own smoke runs; it now trains models of its own (200 steps, evaluated every 20), measured
not reproduced: (a) -0.238 [-0.250, -0.226]. No positive control is known, so the claim cannot
record "not reproduced" (no control licenses it).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field
from scipy.stats import spearmanr

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.guards import Fit, Interval, NotApplicable, combine
from genlab.claims.measures import Derived, Final, series
from genlab.design import Design
from genlab.registry import Params
from genlab.report.claim_figures import Curves

TEST = "test/heldout"
LAYERS = 3  # conv blocks


def _trend(layer: int) -> Derived:
    def fn(m: pd.DataFrame) -> float:
        s = series(m, TEST, f"layer{layer}_diversity").dropna()
        if len(s) < 3 or np.ptp(s.to_numpy()) == 0:
            return float("nan")
        return float(spearmanr(s.index, s.to_numpy()).statistic)

    return Derived(fn, f"Spearman rho(step, layer{layer} diversity) over evaluations after step 0")


class DiversityConfig(Params):
    """SimCLR-trained CNNs on digits, one per width and seed."""

    layer: Literal["last", "first"] = Field("last", description="the layer judged")
    widths: list[int] = Field(default_factory=lambda: [8, 16, 32, 64], min_length=3)
    steps: int = Field(300, ge=10)
    every: int = Field(30, ge=1, description="evaluation interval")
    batch_size: int = Field(128, ge=2)
    lr: float = Field(1e-3, gt=0)
    seeds: int = Field(5, ge=3)


class FeatureDiversity(Claim):
    """The last layer is the most diverse; diversity falls with training, rises with width (#81)."""

    id = "diag.feature_diversity"
    papers = (
        Ref(81, "unidentified", "Feature diversity as a scaling factor in self-supervised CNNs"),
    )
    statement = (
        "SimCLR-trained CNNs (3 conv blocks of width 8/16/32/64) on digits, diversity = mean "
        "pairwise 1 - cosine of channel activation vectors on held-out digits, >= 3 seeds (5 at "
        "full): (a) final diversity of the last block minus the largest of the others has a 95% "
        "CI above 0; (b) per run, Spearman rho(step, last-block diversity) over evaluations after "
        "step 0 has a mean whose CI lies below 0; (c) per seed, Spearman rho(width, final "
        "last-block diversity) has a mean whose CI lies above 0. All three must hold."
    )
    Config = DiversityConfig
    scope = "reconstruction"
    scope_note = (
        "the paper is unidentified and its diversity measure unknown: the catalogue's reading "
        "(mean pairwise 1 - cosine of channel activations, SimCLR on digits, CNN widths 8-64) "
        "stands in for it, judged on the three findings its title and summary state"
    )
    budgets = {"smoke": {"seeds": 3, "steps": 100, "every": 10}, "full": {}}
    measures = {
        **{f"div{i}": Final(TEST, f"layer{i}_diversity") for i in range(LAYERS)},
        "trend0": _trend(0),
        f"trend{LAYERS - 1}": _trend(LAYERS - 1),
        "probe": Final(TEST, f"layer{LAYERS - 1}_probe_acc"),
    }
    fit = Fit("probe", 0.8)  # the SSL features must carry the classes (linear probe, chance 0.1)
    floor = NotApplicable("floor", "diversity is not an accuracy")
    figure = Curves((TEST,), metric=f"layer{LAYERS - 1}_diversity", by="width", logx=False)
    controls = {
        "negative": Control(
            {"layer": "first", "widths": [16, 32, 64], "steps": 200, "every": 20},
            "not reproduced",
            "the first block judged as the "
            "one most diversified, on models of its own trained 200 steps: the "
            "paper finds the last layer the most diversified, so the first must "
            "not be (width 8 left out: at the smoke budget its linear probe, "
            "0.75, is below the fit level)",
            heavy=True,
        ),
    }

    def arms(self, cfg: DiversityConfig):
        base = {
            "task": {"name": "digits", "params": {"train_size": 1000}},
            "model": {"name": "cnn", "params": {"channels": [8] * LAYERS}},
            "method": {"name": "simclr"},
            "optimizer": {"name": "adam", "lr": cfg.lr},
            "steps": cfg.steps,
            "batch_size": cfg.batch_size,
            "checkpoint_every": cfg.steps,
            "eval": {
                "every": cfg.every,
                "log_points": 0,
                "probes": [
                    {"name": "feature_diversity", "params": {"max_samples": 500}},
                    {"name": "layer_probes", "params": {"min_step": cfg.steps}},
                ],
            },
        }
        widths = {w: {"model.params.channels": [w] * LAYERS} for w in cfg.widths}
        return Design(base, axes={"width": widths}, seeds=cfg.seeds).expand()

    def synthetic(self, cfg: DiversityConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: the judged layer is the most diverse (0.2 above the others), falls over
        training (rho -0.7) and rises with width; null: it is the least diverse, flat over
        training and width; unfit: the narrowest width's linear probe at 0.5."""
        k, w = (LAYERS - 1 if cfg.layer == "last" else 0), arm["width"]
        effect = case != "null"
        div = {f"div{i}": 0.05 for i in range(LAYERS)}
        div[f"div{k}"] = 0.25 + 0.01 * np.log2(w) if effect else 0.02
        trend = {"trend0": 0.0, f"trend{LAYERS - 1}": 0.0}
        trend[f"trend{k}"] = -0.7 if effect else 0.0
        probe = 0.5 if case == "unfit" and w == min(cfg.widths) else 0.9
        return {**div, **trend, "probe": probe}

    def decide(self, cfg: DiversityConfig, table: pd.DataFrame) -> Decision:
        k = LAYERS - 1 if cfg.layer == "last" else 0
        others = table[[f"div{i}" for i in range(LAYERS) if i != k]].max(axis=1)
        most = Interval.of(
            f"layer{k} diversity - max(other layers)", (table[f"div{k}"] - others).tolist()
        )
        trend_col = f"trend{k}"
        falls = Interval.of(
            f"rho(step, layer{k} diversity)", table[trend_col].tolist(), above=False
        )
        per_seed = [
            spearmanr(g["width"], g[f"div{k}"]).statistic
            for _, g in table.sort_values("width").groupby("seed")
        ]
        width = Interval.of(f"rho(width, layer{k} diversity) per seed", per_seed)
        means = table.groupby("width")[f"div{k}"].mean()
        stats = {
            "most_diff": most.estimate,
            "rho_step": falls.estimate,
            "rho_width": width.estimate,
            "probe_acc": table["probe"].mean(),
            **{f"div{i}": table[f"div{i}"].mean() for i in range(LAYERS)},
            **{f"div{k}_width{w}": v for w, v in means.items()},
        }
        per_layer = ", ".join(f"{stats[f'div{i}']:.3f}" for i in range(LAYERS))
        sentence = (
            f"(a) {most.text()}; (b) {falls.text()}; (c) {width.text()}. Mean final diversity "
            f"per layer {per_layer}; "
            f"layer{k} by width {', '.join(f'{w}: {v:.3f}' for w, v in means.items())}; "
            f"linear-probe test accuracy (last block) {stats['probe_acc']:.3f}."
        )
        return Decision(
            combine([most.verdict(), falls.verdict(), width.verdict()]),
            stats,
            sentence,
            [most, falls, width],
        )


register(FeatureDiversity())
