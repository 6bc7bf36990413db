"""``fed.fedimpro`` (Tang et al. 2024, #1): under label skew, FedImpro's shared feature
statistics give a better global model than FedAvg, with less dissimilar client updates, and the
gain shrinks as the clients become IID.

Protocol (the catalogue's CPU design for #1): scikit-learn digits, 10 clients with Dirichlet(alpha)
label skew, a 2-layer MLP split before its linear head, 50 rounds of ~1 local epoch (SGD), paired
seeds (each seed draws the split and the initialisation, shared by both methods). Differences
from the paper (CIFAR-10/FMNIST/SVHN, ResNet-18, up to 100 clients sampled 10 a round): toy scale;
the statistics are per-class mean and diagonal variance of the head's input, noise is off
(``noise`` = 0; the paper's privacy knob is ``method.params.noise``), dissimilarity is measured on
whole local updates rather than gradients.

Positive control, Dec 3 2026 (issue #30): it was the claim's own full budget (measured: gain 0.043
[0.014, 0.072]), which shows nothing the claim does not; it is now the same design at alpha 0.05,
which came out inconclusive (its ``open`` text): until a positive control comes out "reproduced"
the claim cannot record "not reproduced". The smoke budget (20 rounds) is a check that the code
runs: its FedAvg arms do not fit.

Heterogeneity in the predicate, Dec 3 2026 (issue #31; the earlier results were known: smoke
near-IID gain 0.067 = non-IID gain 0.065, full near-IID gain 0.011 with its CI above 0): the claim
is about heterogeneity, so the interaction (per seed: the gain under alpha 0.1 minus the gain under
alpha 100) must now have its CI above 0 *and* reach ``INTERACTION`` = 0.02, the claim's own gain
size: the part of the gain that heterogeneity adds must itself be of the stated size, not merely
positive (before: CI above 0, any size). The non-IID gain (>= 0.02, CI > 0) and the dissimilarity
part stay. The positive control (alpha 0.05) came out inconclusive only because FedAvg did not fit
(client accuracy 0.785 < 0.8 at 50 rounds; 20 runs, 14 min wall at load average ~9; every
interval held: gain 0.065 [0.028, 0.103], dissimilarity -0.031 [-0.037, -0.025], interaction 0.054
[0.021, 0.087]); it now trains 100 rounds, the same skew given the
rounds FedAvg needs to fit its clients (a design fixed before its run). Measured (fresh store
``genlab-runs/issue31-fedimpro``): the claim at full reproduced at the seed rule's second look (10
seeds): gain 0.041 [0.024, 0.057], dissimilarity -0.047 [-0.057, -0.038], interaction 0.029
[0.013, 0.044] (near-IID gain 0.012); negative control not reproduced; the positive control came
out inconclusive (its ``open`` text), so the claim still cannot record "not reproduced".
"""

from __future__ import annotations

import pandas as pd

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.fed._common import (
    DISSIMILARITY,
    TEST,
    FedConfig,
    fed_base,
    interval,
    paired,
)
from genlab.claims.guards import Fit, Floor, combine
from genlab.claims.measures import Final
from genlab.design import Design
from genlab.report.claim_figures import ArmBars


class FedImproBeatsFedAvg(Claim):
    """FedImpro >= FedAvg at alpha = 0.1 with lower update dissimilarity; gap shrinks to IID."""

    id = "fed.fedimpro"
    papers = (
        Ref(
            1,
            "Tang, Zhang, Shi, Tian, Liu, Han & Chu 2024",
            "FedImpro: Measuring and Improving Client Update in Federated Learning",
        ),
    )
    statement = (
        "Paired over seeds at Dirichlet alpha = 0.1: FedImpro's global test accuracy exceeds "
        "FedAvg's by >= 0.02 (95% CI above 0) and its mean update dissimilarity is lower (CI "
        "below 0); and the heterogeneity interaction, the gain at alpha = 0.1 minus the gain on "
        "near-IID clients (alpha = 100) paired over seeds, is >= 0.02 with its 95% CI above 0. "
        "Not reproduced when any CI lies wholly on the wrong side of its stated size."
    )
    Config = FedConfig
    scope = "proxy"
    scope_note = (
        "Tang et al. train ResNet-18 on CIFAR-10/FMNIST/SVHN with up to 100 clients "
        "sampled per round; genlab trains a 2x64 MLP on scikit-learn digits with 10 "
        "clients, diagonal Gaussian statistics without noise, and measures the "
        "dissimilarity of whole local updates rather than gradients"
    )
    budgets = {"smoke": {"rounds": 20, "seeds": 3}, "full": {}}  # smoke: seconds, arms unfit
    smoke_decides = False  # 20 rounds: the FedAvg arms do not fit (client accuracy < 0.8)
    GAIN = 0.02
    INTERACTION = 0.02  # the heterogeneity-specific part of the gain, at the claim's gain size
    measures = {
        "acc": Final(TEST),
        "dissim": DISSIMILARITY,
        "client_acc": Final("fed", "client_acc_mean"),
    }
    fit = Fit("client_acc", 0.8)  # the global model fits the clients' own (local test) data
    floor = Floor("acc", 0.2)  # chance is 0.1
    figure = ArmBars("acc", by=("alpha", "method"))
    controls = {
        "negative": Control(
            {"alpha": 1000.0},
            "not reproduced",
            "IID clients (alpha 1000): no "
            "client drift, so FedImpro has no gap to close (measured: gain "
            "0.011 [0.005, 0.017], no lower dissimilarity)",
            "full",
            heavy=True,
        ),
        "positive": Control(
            {"alpha": 0.05, "rounds": 100},
            "reproduced",
            "stronger label "
            "skew (alpha 0.05) over 100 rounds, so that FedAvg fits its clients: "
            "more client drift for the shared feature statistics to correct, so "
            "by the paper's account a larger gain",
            "full",
            heavy=True,
            open="Dec 3 2026 (issue #31, full, 100 rounds, fresh store "
            "genlab-runs/issue31-fedimpro): inconclusive, every arm fits but "
            "with the rounds FedAvg needs the gain shrinks: gain 0.016 [-0.021, "
            "0.053], dissimilarity -0.009 [-0.019, 0.000], interaction 0.015 "
            "[-0.022, 0.051] (5 seeds; near-IID gain 0.002)",
        ),
    }

    def arms(self, cfg: FedConfig):
        methods = {"fedavg": {"method": "fedavg"}, "fedimpro": {"method": "fedimpro"}}
        alphas = {a: {"fed.alpha": a} for a in (cfg.alpha, cfg.alpha_iid)}
        axes = {"alpha": alphas, "method": methods}
        return Design(fed_base(cfg), axes=axes, seeds=cfg.seeds).expand()

    def synthetic(self, cfg: FedConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: under skew FedImpro 0.93 vs FedAvg 0.88 with updates 0.05 less dissimilar,
        near-IID 0.935 vs 0.93; null: FedImpro as FedAvg; unfit: FedImpro's global model fits the
        skewed clients' data only to 0.5."""
        skewed, ours = arm["alpha"] == cfg.alpha, arm["method"] == "fedimpro"
        gain = (0.05 if skewed else 0.005) * ours * (case != "null")
        fits = not (case == "unfit" and skewed and ours)
        return {
            "acc": (0.88 if skewed else 0.93) + gain,
            "client_acc": 0.9 if fits else 0.5,
            "dissim": (1.04 if skewed else 0.5) - gain,
        }

    def decide(self, cfg: FedConfig, table: pd.DataFrame) -> Decision:
        gain = paired(table, "acc", "method", "fedimpro", "fedavg", alpha=cfg.alpha)
        gain_iid = paired(table, "acc", "method", "fedimpro", "fedavg", alpha=cfg.alpha_iid)
        dis = paired(table, "dissim", "method", "fedimpro", "fedavg", alpha=cfg.alpha)
        shrink = [g - h for g, h in zip(gain, gain_iid, strict=False)]
        ivs = [
            interval(f"accuracy gain at alpha={cfg.alpha:g}", gain, smallest=self.GAIN),
            interval("dissimilarity change", dis, above=False),
            interval(
                f"heterogeneity interaction (gain at alpha {cfg.alpha:g} - at {cfg.alpha_iid:g})",
                shrink,
                smallest=self.INTERACTION,
            ),
        ]
        stats = {
            "gain": ivs[0].estimate,
            "gain_iid": interval("", gain_iid).estimate,
            "dissimilarity_change": ivs[1].estimate,
            "shrinkage": ivs[2].estimate,
            "seeds": len(gain),
        }
        sentence = (
            f"At alpha={cfg.alpha:g} FedImpro - FedAvg test accuracy: "
            f"{ivs[0].text()}; update dissimilarity: {ivs[1].text()}; near-IID gain "
            f"{stats['gain_iid']:.3f}; {ivs[2].text()}."
        )
        return Decision(combine([iv.verdict() for iv in ivs]), stats, sentence, ivs)


register(FedImproBeatsFedAvg())
