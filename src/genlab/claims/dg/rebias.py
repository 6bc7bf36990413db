"""``dg.rebias`` (Bahng, Chun, Yun, Choo & Oh, ICML 2020, #90): a model trained to be independent
(HSIC minimax) of a color-only model beats vanilla training on unbiased test data when the
training color is a near-perfect shortcut.

Biased MNIST of the paper (official code: ``clovaai/rebias``, ``main_biased_mnist.py``): 60,000
images, background color = the label's color with probability rho in {0.99, 0.995, 0.997, 0.999},
unbiased test accuracy at the end of training, mean of 3 runs; ReBias's gains over vanilla are large
where vanilla fails (rho >= 0.997) and small at 0.99 (its Table 1). Here ``cross_bias_digits`` (8x8
digits, ~990 training images): rho = 0.99 leaves about 10 bias-conflicting training images, as few
as the paper's 0.999 (60 of 60,000) in count. Differences: the small CNN for F and 1x1 convolutions
for G (the paper: a 4-layer CNN with 7x7 kernels and a 1x1 variant), a biased HSIC estimator, Adam
1e-3 with batch 64 for our step budgets against the paper's 80 epochs.

DomainBed's search (Dec 4 2026, issue #31): at the full budget each arm is read at its best of 4
draws per seed (lr, batch size, both lambdas) on the biased validation set
(``genlab.claims.search``). Measured (10 seeds after the seed rule's second look, 881 s with the
four controls): unbiased accuracy ERM 0.163, ReBias 0.216, paired gain 0.053 [0.009, 0.097]:
reproduced, its estimate 0.003 above the 0.05 bar; negative (rho 0.1) not reproduced at both
budgets, positive (rho 0.9) reproduced at both. At the defaults (Dec 3) the gain was 0.049, a
straddle.
"""

from __future__ import annotations

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.dg.common import (
    SEARCH_FULL,
    SMALL_CNN,
    SearchedConfig,
    dg_spec,
    paired_gain,
    searched,
)
from genlab.claims.guards import Fit, Floor, Interval
from genlab.claims.measures import Final
from genlab.claims.search import with_draws
from genlab.design import Design
from genlab.report.claim_figures import ArmBars


class ReBiasConfig(SearchedConfig):
    """ERM vs ReBias on ``cross_bias_digits`` at bias strength ``rho``, paired by seed."""

    rho: float = Field(0.99, ge=0, le=1, description="P(background color = the label's color)")
    rebias_lambda: float = Field(1.0, ge=0)
    rebias_lambda_g: float = Field(1.0, ge=0)


class ReBias(Claim):
    """ReBias beats vanilla training on unbiased data under a strong color bias (#90)."""

    id = "dg.rebias"
    papers = (
        Ref(
            90,
            "Bahng, Chun, Yun, Choo & Oh 2020",
            "Learning de-biased representations with biased representations",
        ),
    )
    statement = (
        "On cross_bias_digits with rho = 0.99, ReBias's unbiased test accuracy at the last "
        "evaluation exceeds vanilla ERM's (same seed and data) by a mean paired gain >= 0.05 with "
        "its 95% CI above 0. Not reproduced when the CI's upper end is below 0.05."
    )
    Config = ReBiasConfig
    scope = "proxy"
    scope_note = (
        "Biased MNIST (60,000 28x28 images, 4-layer CNNs with 7x7 kernels, 80 epochs) replaced by "
        "cross_bias_digits (~990 8x8 digits on a label-coloured background), a small CNN and 1x1 "
        "convolutions, 201 / 1,001 Adam steps; at the full budget each arm at its best of 4 "
        "random-search draws (lr, batch size, the two lambdas), picked on biased validation"
    )
    budgets = {"smoke": {"steps": 201}, "full": {"steps": 1001, "seeds": 5, "search": SEARCH_FULL}}
    search_on = "val"
    MIN_GAIN = 0.05  # fixed before running: the paper's gains where bias bites are larger
    measures = {"unbiased": Final("test/unbiased"), "val": Final("val/biased")}
    fit = Fit("val", 0.8)
    floor = Floor("unbiased", 0.15)
    figure = ArmBars("unbiased", by="method")
    controls = searched(
        {
            "negative": Control(
                {"rho": 0.1},
                "not reproduced",
                "rho = 0.1: the color is drawn independently of the label, no shortcut to remove",
            ),
            "positive": Control(
                {"rho": 0.9},
                "reproduced",
                "rho = 0.9: vanilla still falls to ~0.18 "
                "unbiased accuracy, with ~100 bias-conflicting images to learn from",
            ),
        }
    )

    def arms(self, cfg: ReBiasConfig):
        task = {"name": "cross_bias_digits", "params": {"rho": cfg.rho}}
        rebias = {
            "name": "rebias",
            "params": {"rebias_lambda": cfg.rebias_lambda, "rebias_lambda_g": cfg.rebias_lambda_g},
        }
        methods = {"erm": {}, "rebias": {"method": rebias}}
        design = Design(dg_spec(task, SMALL_CNN, cfg), {"method": methods}, seeds=cfg.seeds)
        return with_draws(design.expand(), cfg.search, keep=())  # the lambdas drawn too

    def synthetic(self, cfg: ReBiasConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: ReBias gains 0.1 unbiased accuracy over ERM (0.3); null: no gain; unfit:
        ReBias at val 0.5."""
        rebias = arm["method"] == "rebias"
        gain = 0.1 * rebias if case != "null" else 0.0
        return {"unbiased": 0.3 + gain, "val": 0.5 if case == "unfit" and rebias else 0.99}

    def decide(self, cfg: ReBiasConfig, table: pd.DataFrame) -> Decision:
        iv = Interval.of(
            "ReBias - ERM",
            paired_gain(table, "method", "rebias", "erm", "unbiased"),
            null=0.0,
            smallest=self.MIN_GAIN,
        )
        mean = table.groupby("method")["unbiased"].mean()
        stats = {
            "gain_mean": iv.estimate,
            "gain_ci_lo": iv.lo,
            "gain_ci_hi": iv.hi,
            **{f"{m}_mean": v for m, v in mean.items()},
        }
        return Decision(
            iv.verdict(),
            stats,
            f"Unbiased test accuracy ERM {mean.get('erm', 0):.3f}"
            f", ReBias {mean.get('rebias', 0):.3f}; paired gain {iv.text()}; rho "
            f"{cfg.rho}, {cfg.steps} steps.",
            [iv],
        )


register(ReBias())
