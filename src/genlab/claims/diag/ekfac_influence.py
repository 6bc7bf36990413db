"""``diag.ekfac_influence`` (Grosse et al. 2023, #13): EK-FAC influence functions agree with the
exact influence functions they approximate, at a fraction of the cost.

On an MLP trained on digits, the ``influence_estimators`` probe scores held-out queries against
training samples three ways with one damping (0.1 x the mean eigenvalue of the exact GGN): the
exact damped Gauss-Newton inverse, EK-FAC (per-layer Kronecker eigenbasis with corrected
eigenvalues, ``probes/ekfac.py``) and the curvature-free gradient dot product. Differences: the
paper checks EK-FAC against the proximal Bregman response function (PBRF) on regression, MNIST,
CIFAR and language models, next to LiSSA; here against the exact damped-GGN inverse (the
quantity EK-FAC approximates) on one small MLP, and without the paper's LLM-scale analyses.
kronfluence (the paper's public re-implementation) damps each layer by 0.1 x its mean
eigenvalue; here one damping for every estimator so that they are comparable. Negative control
(the point of a curvature approximation): with a damping 1,000x larger the curvature is swamped,
every estimator is the dot product, and EK-FAC adds nothing over it.
"""

from __future__ import annotations

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Claim, Control, Decision, Ref
from genlab.claims.diag._common import TRAIN, TRAIN_ACC, digits_base
from genlab.claims.guards import Fit, Interval, NotApplicable, combine
from genlab.claims.measures import Final
from genlab.design import Design
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars


class EKFACConfig(Params):
    """A trained MLP on digits per seed; the three estimators on its final weights."""

    damping_factor: float = Field(0.1, gt=0, description="λ / mean GGN eigenvalue")
    width: int = Field(16, ge=2, le=64)
    steps: int = Field(1000, ge=1)
    max_fit: int = Field(0, ge=0, description="inputs for the curvature (0: the training set)")
    seeds: int = Field(10, ge=3)


class EKFACInfluence(Claim):
    """EK-FAC influences agree with exact ones, far better than the dot product (Grosse et al.)."""

    id = "diag.ekfac_influence"
    papers = (Ref(13, "Grosse, Bae, Anil, Elhage, Tamkin, Tajdini, Steiner, Li, Durmus, Perez, "
                  "Hubinger, Lukošiūtė, Nguyen, Joseph, McCandlish, Kaplan & Bowman 2023",
                  "Studying large language model generalization with influence functions"),)  # fmt: skip
    statement = (
        "On an MLP (2 hidden layers of 16) trained by SGD on digits, over >= 3 seeds (10 at full "
        "budget): the Pearson correlation between EK-FAC and exact damped-GGN influences (32 "
        "held-out queries x 256 training samples) has mean >= 0.7 with its 95% CI above 0, and "
        "exceeds the gradient dot product's correlation by >= 0.1 with the CI of the paired "
        "difference above 0."
    )
    Config = EKFACConfig
    budgets = {"smoke": {"seeds": 3, "max_fit": 400}, "full": {}}
    MIN_R, MIN_GAIN = 0.7, 0.1  # "strongly correlated"; curvature must matter; fixed before
    measures = {"ekfac": Final(TRAIN, "ekfac_pearson"), "dot": Final(TRAIN, "dot_pearson"),
                "ekfac_spearman": Final(TRAIN, "ekfac_spearman"), "train": TRAIN_ACC}  # fmt: skip
    fit = Fit("train", 0.95)  # influence functions assume a trained model
    floor = NotApplicable("floor", "correlations between estimators, not accuracies")
    figure = ArmBars("ekfac", lines=(("0.7", 0.7),))
    controls = {
        "negative": Control({"damping_factor": 100.0}, "not reproduced", "damping 1,000x: the "
                            "curvature is swamped and EK-FAC is the dot product"),
        "positive": Control({}, "reproduced", "the smoke budget"),
    }  # fmt: skip

    def arms(self, cfg: EKFACConfig):
        probe = {"name": "influence_estimators",
                 "params": {"damping_factor": cfg.damping_factor, "max_fit": cfg.max_fit}}  # fmt: skip
        base = digits_base(train_size=1000, width=cfg.width, depth=2, lr=0.1, batch_size=100,
                           steps=cfg.steps, every=cfg.steps, probes=[probe])  # fmt: skip
        return Design(base, seeds=cfg.seeds).expand()

    def decide(self, cfg: EKFACConfig, table: pd.DataFrame) -> Decision:
        r = Interval.of("Pearson r(EK-FAC, exact)", table["ekfac"].tolist(), null=0,
                        smallest=self.MIN_R)  # fmt: skip
        gain = Interval.of("r(EK-FAC) - r(dot product)", (table["ekfac"] - table["dot"]).tolist(),
                           null=0, smallest=self.MIN_GAIN)  # fmt: skip
        stats = {"r_ekfac": r.estimate, "r_dot": table["dot"].mean(), "gain": gain.estimate,
                 "spearman_ekfac": table["ekfac_spearman"].mean()}  # fmt: skip
        sentence = (f"{r.text()}; {gain.text()}; Spearman r(EK-FAC, exact) "
                    f"{stats['spearman_ekfac']:.3f}; damping {cfg.damping_factor:g} x mean GGN "
                    "eigenvalue.")  # fmt: skip
        return Decision(combine([r.verdict(), gain.verdict()]), stats, sentence, [r, gain])


register(EKFACInfluence())
