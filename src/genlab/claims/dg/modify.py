"""``dg.modify`` (Jiang et al. 2023, #74): MoDify — RGB-Shuffle samples scheduled by a momentum
estimate of the model's capability — beats ERM on an unseen domain, and its scheduling is no worse
than shuffling alone.

The catalogue's CPU design: colored digits, held-out domain accuracy of MoDify vs ERM and vs plain
RGB-Shuffle (``modify`` with every augmented sample admitted), 5 seeds, training-domain
validation. Differences from the paper: no official code was found (searched: the code and docs
corpora hold no MoDify repository); genlab's ``modify`` is our reading of the abstract (an EMA of
the clean loss as capability, augmented samples admitted up to ``(1 + tolerance)`` times it, their
loss added to the clean loss), not the paper's schedule: per its project page, MoDify-DA sets each
sample's augmentation strength from its difficulty against a loss bank, and MoDify-NO postpones,
drops or learns each augmented sample by its difficulty against the same bank (here: full-strength
shuffles, dropped or learned, against an EMA of the batch loss); the paper's benchmarks are
segmentation, detection and classification on natural images with ResNets, its RGB-Shuffle
permutes three channels; ``colored_digits`` has two, so a shuffle swaps them with probability 1/2,
which removes exactly the colour cue (the test is whether an augmentation that destroys the
shortcut helps, and whether scheduling costs anything). Further differences: the metric is
held-out-domain accuracy at the step of best training-domain validation accuracy (the paper:
mIoU, mAP and accuracy on its benchmarks' target domains), the small CNN from scratch with
DomainBed's defaults (Adam, lr 1e-3, 601 steps), and the aggregation a paired mean with a 95% CI
over 5 seeds (the paper: one number per benchmark).

The claim is a reconstruction (``scope``): its judge's "not reproduced" is a decision about this
reading of MoDify, not about the paper's method, and it is recorded only when the positive
control (full budget) comes out reproduced. Earlier candidates for that control
(``tolerance=2.0`` at smoke and full, a weaker colour cue ``color_flip=[0.25,0.3,0.9]`` at smoke)
came out inconclusive.

DomainBed's search (Dec 4 2026, issue #31): at the full budget each arm is read at its best of 4
hyper-parameter draws per seed by training-domain validation (``genlab.claims.search``), with a
positive control at tolerance 5 declared before the searched run. Measured (10 seeds after the
seed rule's second look, 673 s with controls): ERM 0.137, MoDify 0.136, RGB-Shuffle 0.147 held
out; MoDify - ERM -0.001 [-0.037, 0.035], MoDify - RGB-Shuffle -0.011 [-0.036, 0.013]: both
straddle, inconclusive; the positive control and the full negative came out inconclusive too. At
the defaults RGB-Shuffle had held out 0.298: picked on the training domains, where the colour is a
real cue, the search favours the draws that learn the colour, shuffled or not (DomainBed's finding
that under training-domain validation nothing separates from ERM).

Measured history: docs/domain_shift.md (dg.modify).
"""

from __future__ import annotations

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.dg.common import (
    HELDOUT,
    SEARCH_FULL,
    SMALL_CNN,
    VAL,
    SearchedConfig,
    dg_spec,
    paired_gain,
    searched,
)
from genlab.claims.guards import Fit, Interval, NotApplicable, combine
from genlab.claims.search import with_draws
from genlab.design import Design
from genlab.report.claim_figures import ArmBars

ALL = 1e9  # a tolerance that admits every augmented sample: plain RGB-Shuffle


class MoDifyConfig(SearchedConfig):
    """ERM, RGB-Shuffle and MoDify on ``colored_digits`` with ``test_env`` held out."""

    test_env: int = Field(2, ge=0, le=2, description="0=+90% 1=+80% 2=-90% (colour reversed)")
    color_flip: list[float] = Field(
        default_factory=lambda: [0.1, 0.2, 0.9],
        min_length=3,
        max_length=3,
        description="P(color != label) per env",
    )
    tolerance: float = Field(0.5, ge=0, description="MoDify's difficulty tolerance")
    steps: int = Field(601, ge=1)
    seeds: int = Field(5, ge=2)


class MoDify(Claim):
    """MoDify beats ERM on the held-out colour domain and is no worse than RGB-Shuffle (#74)."""

    id = "dg.modify"
    papers = (
        Ref(
            74,
            "Jiang et al. 2023 (likely)",
            "Domain generalization via balancing training difficulty and model capability",
        ),
    )
    statement = (
        "On colored_digits with the colour-reversed -90% environment held out (training-domain "
        "validation), MoDify's held-out accuracy exceeds ERM's by >= 0.02 with the paired 95% CI "
        "over seeds above 0, and MoDify minus plain RGB-Shuffle has its CI above -0.02 "
        "(non-inferior). Not reproduced when a CI lies wholly below its threshold."
    )
    Config = MoDifyConfig
    budgets = {"smoke": {"steps": 201, "seeds": 3}, "full": {"search": SEARCH_FULL}}
    search_on = "val"
    GAIN, MARGIN = 0.02, 0.02  # fixed before running
    scope = "reconstruction"
    scope_note = (
        "MoDify's scheduling read from the abstract (no official code found): full-strength "
        "RGB shuffles admitted while their loss is <= (1 + tolerance) x an EMA of the clean "
        "batch loss, not the paper's per-sample difficulty-set augmentation strength and "
        "postpone/drop/learn decisions against a loss bank; at the full budget each arm at its "
        "best of 4 random-search draws (lr, batch size, modify_lambda; the tolerance is the "
        "claim's), picked by training-domain validation"
    )
    measures = {"heldout": HELDOUT, "val": VAL}
    fit = Fit("val", 0.7)  # shape alone gets ~0.75 on the training domains (25% label noise)
    floor = NotApplicable(
        "floor",
        "ERM is expected below chance on the reversed colour; arms "
        "that all stay there refute the claim (the fit guard catches arms that "
        "learned nothing)",
    )
    figure = ArmBars("heldout", by="method")
    controls = searched(
        {
            "negative": Control(
                {"color_flip": [0.1, 0.2, 0.1]},
                "not reproduced",
                "the same "
                "training environments, but the held-out one keeps their colour "
                "cue (colour agrees with the label 90%): no shift for an "
                "augmentation that removes colour to fix",
                slow=True,
            ),
        }
    ) | {
        "positive": Control(
            {"tolerance": 5.0},
            "reproduced",
            "a loose tolerance (5: a shuffled sample is admitted while its loss is at most 6x the "
            "clean loss's running mean), so MoDify admits nearly every RGB shuffle and inherits "
            "what removes the colour cue: the gain over ERM the claim credits to MoDify's "
            "augmentation must show, and non-inferiority to plain RGB-Shuffle must hold (the runs "
            "are not RGB-Shuffle's: samples past the bound are still held back). It shows "
            "'reproduced' is reachable, nothing about the scheduling. Declared Dec 4 2026 after "
            "the Dec 3 full result had been seen (MoDify 0.111, RGB-Shuffle 0.298, ERM 0.130), "
            "before any run under the search",
            budget="full",
            slow=True,
            heavy=True,
        )
    }

    def arms(self, cfg: MoDifyConfig):
        task = {
            "name": "colored_digits",
            "params": {"test_envs": [cfg.test_env], "color_flip": cfg.color_flip},
        }
        base = dg_spec(task, SMALL_CNN, cfg)
        methods = {
            "erm": {},
            "shuffle": {"method": {"name": "modify", "params": {"tolerance": ALL}}},
            "modify": {"method": {"name": "modify", "params": {"tolerance": cfg.tolerance}}},
        }
        design = Design(base, axes={"method": methods}, seeds=cfg.seeds)
        return with_draws(design.expand(), cfg.search, keep=("tolerance",))

    def synthetic(self, cfg: MoDifyConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: ERM 0.3, RGB-Shuffle 0.6, MoDify 0.62 held out; null: all at 0.3; unfit:
        MoDify at val 0.5."""
        held = {"erm": 0.3, "shuffle": 0.6, "modify": 0.62}[arm["method"]]
        unfit = case == "unfit" and arm["method"] == "modify"
        return {"heldout": 0.3 if case == "null" else held, "val": 0.5 if unfit else 0.8}

    def decide(self, cfg: MoDifyConfig, table: pd.DataFrame) -> Decision:
        vs_erm = Interval.of(
            "MoDify - ERM", paired_gain(table, "method", "modify", "erm"), smallest=self.GAIN
        )
        vs_shuffle = Interval.of(
            "MoDify - RGB-Shuffle",
            paired_gain(table, "method", "modify", "shuffle"),
            null=-self.MARGIN,
            smallest=-self.MARGIN,
        )
        means = table.groupby("method")["heldout"].mean()
        stats = {f"{m}_heldout": v for m, v in means.items()} | {
            "gain_vs_erm": vs_erm.estimate,
            "gain_vs_shuffle": vs_shuffle.estimate,
        }
        sentence = (
            f"Held-out accuracy (env {cfg.test_env}, {cfg.steps} steps, {cfg.seeds} "
            "seeds): "
            + ", ".join(f"{m} {v:.3f}" for m, v in means.items())
            + f"; {vs_erm.text()}; {vs_shuffle.text()}."
        )
        verdict = combine([vs_erm.verdict(), vs_shuffle.verdict()])
        return Decision(verdict, stats, sentence, [vs_erm, vs_shuffle])


register(MoDify())
