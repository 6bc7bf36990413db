"""``diag.ekfac_influence`` (Grosse et al. 2023, #13): EK-FAC ranks training samples about as
accurately as LiSSA, the traditional influence estimator, both against the exact damped
Gauss-Newton influence.

The paper's relative statement, Dec 3 2026 (issue #31; earlier results known: full Spearman of
EK-FAC with the exact inverse 0.316, Pearson 0.711, "not reproduced" under the absolute bar): the
claim no longer asks for an absolute Spearman >= 0.7 but for what the paper states, that EK-FAC is
about as accurate as LiSSA. LiSSA (``probes/ekfac.lissa_ihvp``, a stochastic Neumann series as in
Koh & Liang 2017 and the ``LiSSA`` classes of pyDVL / dattri, read, not copied) runs on the same
model, damping and queries: 1,000 recursion steps of 100 curvature samples each (100 passes over the
1,000 training inputs), scale 2 x the damped GGN's top eigenvalue (power iteration), one repeat.
Both are scored by Spearman's correlation with the exact damped-GGN influence per seed; the paired
difference EK-FAC - LiSSA must have its 95% CI above ``-DELTA`` = -0.1 ("about as accurate": at
most 0.1 of Spearman worse), not reproduced when the CI lies wholly below -0.1. Fixed before the
run. The ground truth stays the exact damped-GGN inverse, the PBRF's first-order (Gauss-Newton)
form that both estimators approximate; the PBRF itself (one proximal re-optimisation per training
sample) is not computed. The scope is now ``proxy`` (the paper's statement on a scaled-down
model), no longer ``reconstruction``.

On an MLP trained by SGD on digits, the ``influence_estimators`` probe (``probes/ekfac.py``)
scores 32 held-out queries against 256 training samples four ways with one damping ``λ`` (0.1 x
the mean eigenvalue of the exact GGN; kronfluence, the paper's public re-implementation, damps each
layer by 0.1 x its mean eigenvalue): the exact damped Gauss-Newton inverse, EK-FAC (per-layer
Kronecker eigenbasis with eigenvalues re-estimated from per-sample gradients, cross-layer blocks
dropped, as in the paper), LiSSA and the curvature-free gradient dot product. The measure is the
catalogue's: Spearman's correlation of each estimator's scores with the exact ones over all
(query, training sample) pairs, per seed. Differences: the paper checks EK-FAC against the
proximal Bregman response function next to LiSSA on regression, MNIST, CIFAR and language models;
here against the exact damped-GGN inverse (the quantity both approximate) on one small MLP.

Protocol audit (issue h24). Grosse et al. released no code; kronfluence (``pomonam/kronfluence``,
by co-author Bae) is the public re-implementation, and EK-FAC's rules here match its
``factor/eigen.py`` (activation and pre-activation-gradient covariances, their eigenbases, the
eigenvalues re-estimated from rotated per-sample gradients, IHVP ``g / (Λ + λ)`` in that basis): the
method is faithful; the predicate was then a reconstruction (an absolute Spearman >= 0.7; replaced
by the paper's relative statement, issue #31, above). Differences: kronfluence's default damping is an absolute
1e-8 and its heuristic (``damping=None``) damps each layer by 0.1 x the mean of that layer's
corrected eigenvalues, here one λ (0.1 x the mean exact-GGN eigenvalue) for every layer and every
estimator, so that all are compared with one exact target; the ground truth is the exact damped-GGN
inverse (what LiSSA converges to), not the PBRF; the statistic is the
catalogue's (Spearman over all query x training pairs; Pearson recorded next to it), the paper's
correlation statistic could not be read offline; 10 seeds, mean with a 95% CI. Not done:
leave-one-out retraining and the order-flip transformer.

Negative control (redesigned Dec 3 2026, issue #30: it was the dot product judged on the
claim's own runs, which trained nothing of its own): the dot product at damping 0.01 x the mean
GGN eigenvalue, runs of its own; measured not reproduced under the absolute bar (smoke: Spearman
0.035 [0.005, 0.066]; EK-FAC on those models 0.259). Since issue #31 it is judged as the claim is,
against LiSSA (dot product - LiSSA must not reach -0.1), and measured again.

Measured history: docs/diagnostics.md (diag.ekfac_influence).
"""

from __future__ import annotations

from typing import Literal

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.diag._common import TRAIN, TRAIN_ACC, digits_base
from genlab.claims.guards import Fit, Interval, NotApplicable
from genlab.claims.measures import Final
from genlab.design import Design
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars


class EKFACConfig(Params):
    """A trained MLP on digits per seed; the estimators scored on its final weights."""

    estimator: Literal["ekfac", "dot"] = Field(
        "ekfac", description="the estimator judged against LiSSA"
    )
    damping_factor: float = Field(0.1, gt=0, description="λ / mean GGN eigenvalue")
    width: int = Field(16, ge=2, le=64)
    depth: int = Field(2, ge=1, le=3)
    steps: int = Field(1000, ge=1)
    max_fit: int = Field(0, ge=0, description="inputs for the curvature (0: the training set)")
    lissa_depth: int = Field(1000, ge=1, description="LiSSA recursion steps")
    lissa_batch: int = Field(100, ge=1, description="curvature samples per LiSSA step")
    seeds: int = Field(10, ge=3)


class EKFACInfluence(Claim):
    """EK-FAC influences rank training samples as exact ones do (Grosse et al.)."""

    id = "diag.ekfac_influence"
    papers = (
        Ref(
            13,
            "Grosse, Bae, Anil, Elhage, Tamkin, Tajdini, Steiner, Li, Durmus, Perez, "
            "Hubinger, Lukošiūtė, Nguyen, Joseph, McCandlish, Kaplan & Bowman 2023",
            "Studying large language model generalization with influence functions",
        ),
    )
    scope = "proxy"
    scope_note = (
        "Grosse et al. compare EK-FAC with LiSSA against the PBRF on regression, MNIST, CIFAR and "
        "language models; genlab compares them on a 1,482-parameter MLP trained on digits, against "
        "the exact damped Gauss-Newton influence (the PBRF's linearisation) instead of the PBRF, "
        "by Spearman's correlation over 32 queries x 256 training samples"
    )
    statement = (
        "On an MLP (2 hidden layers of 16, 1,482 parameters) trained by SGD on 1,000 digits to "
        ">= 95% training accuracy, with damping 0.1 x the mean GGN eigenvalue: EK-FAC is about as "
        "accurate as LiSSA (1,000 steps of 100 samples, scale 2 x the top eigenvalue), both "
        "scored by the Spearman correlation of their influences with the exact damped-GGN "
        "influences (32 held-out queries x 256 training samples): the per-seed difference EK-FAC "
        "- LiSSA has its 95% CI above -0.1 over >= 3 seeds (10 at full budget); not reproduced "
        "when the CI lies wholly below -0.1."
    )
    Config = EKFACConfig
    budgets = {"smoke": {"seeds": 3, "max_fit": 400}, "full": {}}
    DELTA = 0.1  # "about as accurate": at most 0.1 of Spearman below LiSSA (fixed before the run)
    measures = {
        "ekfac": Final(TRAIN, "ekfac_spearman"),
        "dot": Final(TRAIN, "dot_spearman"),
        "lissa": Final(TRAIN, "lissa_spearman"),
        "ekfac_pearson": Final(TRAIN, "ekfac_pearson"),
        "dot_pearson": Final(TRAIN, "dot_pearson"),
        "lissa_pearson": Final(TRAIN, "lissa_pearson"),
        "train": TRAIN_ACC,
    }
    fit = Fit("train", 0.95)  # influence functions assume a trained model
    floor = NotApplicable("floor", "correlations between estimators, not accuracies")
    figure = ArmBars("ekfac")
    controls = {
        "negative": Control(
            {"estimator": "dot", "damping_factor": 0.01},
            "not reproduced",
            "the curvature-free gradient dot product judged against LiSSA at "
            "damping 0.01 x the mean GGN eigenvalue (runs of its own: the probe's "
            "target differs): the trained GGN is far from isotropic, so ignoring "
            "it must not be about as accurate as an estimator that inverts it",
            slow=True,
        ),
        "positive": Control(
            {"damping_factor": 1000.0},
            "reproduced",
            "damping 10,000x the "
            "budget's: the curvature is swamped, every estimator (EK-FAC and "
            "LiSSA too) is the dot product, so EK-FAC must match LiSSA",
            slow=True,
        ),
    }

    def arms(self, cfg: EKFACConfig):
        probe = {
            "name": "influence_estimators",
            "params": {
                "damping_factor": cfg.damping_factor,
                "max_fit": cfg.max_fit,
                "lissa_depth": cfg.lissa_depth,
                "lissa_batch": cfg.lissa_batch,
            },
        }
        base = digits_base(
            train_size=1000,
            width=cfg.width,
            depth=cfg.depth,
            lr=0.1,
            batch_size=100,
            steps=cfg.steps,
            every=cfg.steps,
            probes=[probe],
        )
        return Design(base, seeds=cfg.seeds).expand()

    def synthetic(self, cfg: EKFACConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: the judged estimator ranks as LiSSA does (Spearman 0.8 vs 0.82); null: it
        ranks as EK-FAC's full run measured (0.3) against a LiSSA at 0.85; unfit: as effect,
        training accuracy 0.6."""
        rho, lissa = (0.3, 0.85) if case == "null" else (0.8, 0.82)
        return {
            "ekfac": rho,
            "dot": rho,
            "lissa": lissa,
            "ekfac_pearson": rho,
            "dot_pearson": rho,
            "lissa_pearson": lissa,
            "train": 0.6 if case == "unfit" else 0.98,
        }

    def decide(self, cfg: EKFACConfig, table: pd.DataFrame) -> Decision:
        est = cfg.estimator
        diff = Interval.of(
            f"Spearman {est} - LiSSA",
            (table[est] - table["lissa"]).tolist(),
            null=-self.DELTA,
            smallest=-self.DELTA,
        )
        stats = {
            "diff": diff.estimate,
            "diff_lo": diff.lo,
            "diff_hi": diff.hi,
            "rho_ekfac": table["ekfac"].mean(),
            "rho_lissa": table["lissa"].mean(),
            "rho_dot": table["dot"].mean(),
            "pearson_ekfac": table["ekfac_pearson"].mean(),
            "pearson_lissa": table["lissa_pearson"].mean(),
            "pearson_dot": table["dot_pearson"].mean(),
            "train_acc": table["train"].mean(),
        }
        sentence = (
            f"{diff.text()}; means over seeds, Spearman with the exact damped-GGN influence: "
            f"EK-FAC {stats['rho_ekfac']:.3f}, LiSSA {stats['rho_lissa']:.3f}, dot product "
            f"{stats['rho_dot']:.3f}; Pearson EK-FAC {stats['pearson_ekfac']:.3f}, LiSSA "
            f"{stats['pearson_lissa']:.3f}, dot product {stats['pearson_dot']:.3f}; damping "
            f"{cfg.damping_factor:g} x mean GGN eigenvalue; training accuracy "
            f"{stats['train_acc']:.3f}."
        )
        return Decision(diff.verdict(), stats, sentence, [diff])


register(EKFACInfluence())
