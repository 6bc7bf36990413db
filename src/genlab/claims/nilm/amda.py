"""``nilm.amda`` (Interno et al., "Industrial energy disaggregation with digital twin-generated
dataset and efficient data augmentation", SIDED + AMDA, #36): trained on one site and tested on
another, a seq2point network disaggregates the CHP better with appliance-modulated augmentation
(AMDA) than with random scaling, and better with random scaling than with none.

On ``industrial_load`` (five synthetic appliances; the target is the CHP, a generator), a
``seq2point`` CNN (~10k parameters) is trained on site A's 20 days (2,000 windows of 99 points at
5 minutes, plus one augmented copy of each in the augmented arms) and tested on site B, whose
appliances are scaled by factors drawn log-uniformly in [1/2, 2] per seed (data seed = seed: each
seed a new pair of sites). Arms: ``none``, ``random`` (each appliance scaled by its own U(0.5, 2)
factor) and ``amda`` (each by ``s (1 - p_i) / 0.8``, s ~ U(0.5, 2), ``p_i`` its share of site A's
absolute power). Adam (lr 1e-3), batch 64, 2,000 steps, squared error. Metric: the normalised
disaggregation error ``NDE = Σ(ŷ - y)² / Σy²`` on site B.

Protocol differences from the paper (no official code in the index; the dataset repository
ChristianInterno/SIDED holds data and metadata only; a public re-implementation, Skan22/NILM_SIDED,
was read for AMDA's factor ``s (1 - p_i)``): appliance models written here, not SIDED's digital
twins (no weather, no facility types); site shift as per-appliance scale factors only; 5-minute
data, 99-point windows; a small seq2point CNN instead of the paper's TCN/ATCN/LSTM; one augmented
copy per window; the random augmentation is per-appliance uniform scaling, not necessarily the
paper's "state-of-the-art" baseline; how AMDA draws its global factor is genlab's reading (see
``genlab.tasks.industrial_load``). The pilot (before the freeze) read the ``none`` arm's training
NDE against steps (0.058 at 500, 0.011 at 2,000) and its step time.
"""

from __future__ import annotations

import math

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.arms import arms, by_seed
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.guards import Fit, Interval, NotApplicable, combine
from genlab.claims.measures import Final
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars

AUGMENTS = ("none", "random", "amda")


class AMDAConfig(Params):
    """Sites, windows, augmentation range, model, training and seeds."""

    site_shift: float = Field(2.0, ge=1)
    days: int = Field(20, ge=2)
    n_windows: int = Field(2000, ge=10)
    lo: float = Field(0.5, gt=0)
    hi: float = Field(2.0, gt=0)
    channels: int = Field(16, ge=1)
    steps: int = Field(2000, ge=1)
    batch: int = Field(64, ge=1)
    lr: float = Field(1e-3, gt=0)
    seeds: int = Field(5, ge=2)


class AMDA(Claim):
    """Out of site, NDE with AMDA < with random scaling < without augmentation (#36)."""

    id = "nilm.amda"
    papers = (
        Ref(
            36,
            "Interno et al. 2025",
            "Industrial energy disaggregation with digital "
            "twin-generated dataset and efficient data augmentation (SIDED, AMDA)",
        ),
    )
    statement = (
        "Paired over seeds on industrial_load (train site A, test site B with appliances "
        "rescaled by factors in [1/2, 2]), a seq2point CNN for the CHP: site-B NDE with random "
        "scaling augmentation is at least 10% below no augmentation, and with AMDA at least 10% "
        "below random scaling: for each, the CI of the log NDE ratio lies below 0 and its mean "
        "reaches log 0.9. Not reproduced when either CI lies wholly above log 0.9."
    )
    Config = AMDAConfig
    scope = "proxy"
    scope_note = (
        "five appliance models written by genlab stand in for SIDED's digital twins; "
        "the site shift is per-appliance scaling; a ~10k-parameter seq2point CNN, one "
        "augmented copy per window; AMDA's global factor drawn per window"
    )
    budgets = {"smoke": {"seeds": 2, "steps": 300, "n_windows": 500}, "full": {}}
    smoke_decides = False
    measures = {
        "site_b": Final("test/site_b", "nde"),
        "site_a": Final("test/site_a", "nde"),
        "train": Final("train/main", "nde"),
    }
    fit = Fit("train", 0.2, below=True)
    floor = NotApplicable(
        "floor",
        "the fit guard (training NDE <= 0.2 in every arm) rules out "
        "arms that learned nothing (predicting zero gives NDE 1)",
    )
    figure = ArmBars("site_b", by=("augment",))
    controls = {
        "negative": Control(
            {"site_shift": 1.0},
            "not reproduced",
            "site B's appliances at site A's scales: by the paper's account AMDA "
            "helps by aligning the training distribution with another site's; "
            "with no site shift there is nothing to align, so rescaled copies "
            "cannot order the arms AMDA < random < none",
            budget="full",
            heavy=True,
        ),
        "positive": Control(
            {"site_shift": 4.0},
            "reproduced",
            "site B's appliances rescaled by factors in [1/4, 4]: the larger the "
            "shift, the more an augmentation that covers it must matter, so the "
            "ordering has the most room to show",
            budget="full",
            heavy=True,
        ),
    }
    MARGIN = math.log(0.9)  # at least 10% lower, fixed before running

    def arms(self, cfg: AMDAConfig):
        rows = []
        for augment in AUGMENTS:
            task = {
                "name": "industrial_load",
                "params": {
                    "augment": augment,
                    "site_shift": cfg.site_shift,
                    "days": cfg.days,
                    "n_windows": cfg.n_windows,
                    "lo": cfg.lo,
                    "hi": cfg.hi,
                },
            }
            for s in range(cfg.seeds):
                rows.append(
                    (
                        {"augment": augment},
                        {
                            "task": task,
                            "model": {"name": "seq2point", "params": {"channels": cfg.channels}},
                            "method": {"name": "mse"},
                            "optimizer": {"name": "adam", "lr": cfg.lr},
                            "steps": cfg.steps,
                            "batch_size": cfg.batch,
                            "checkpoint_every": cfg.steps,
                            "eval": {
                                "every": cfg.steps,
                                "log_points": 0,
                                "probes": [{"name": "regression_error"}],
                            },
                            "seed": s,
                            "data_seed": s,
                        },
                    )
                )
        return arms(rows)

    def synthetic(self, cfg: AMDAConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: site-B NDE 0.6 without augmentation, 0.45 with random scaling, 0.3 with AMDA;
        null: 0.45 for all three; unfit: as effect, the AMDA arm's training NDE at 0.5."""
        nde = {"none": 0.6, "random": 0.45, "amda": 0.3}[arm["augment"]]
        nde = 0.45 if case == "null" else nde
        train = 0.5 if case == "unfit" and arm["augment"] == "amda" else 0.05
        return {"site_b": nde, "site_a": 0.1, "train": train}

    def decide(self, cfg: AMDAConfig, table: pd.DataFrame) -> Decision:
        nde = {a: by_seed(table, a, "site_b", "augment") for a in AUGMENTS}
        log = {a: v.map(math.log) for a, v in nde.items()}
        ivs = [
            Interval.of(
                f"log(NDE {b} / NDE {a}) on site B",
                (log[b] - log[a]).dropna().tolist(),
                null=0,
                smallest=self.MARGIN,
                above=False,
            )
            for a, b in (("none", "random"), ("random", "amda"))
        ]
        site_a = {a: by_seed(table, a, "site_a", "augment").mean() for a in AUGMENTS}
        stats = {f"nde_b_{a}": v.mean() for a, v in nde.items()}
        stats |= {f"nde_a_{a}": v for a, v in site_a.items()}
        sentence = (
            f"Site-B NDE: none {stats['nde_b_none']:.3f}, random {stats['nde_b_random']:.3f}, "
            f"AMDA {stats['nde_b_amda']:.3f} (site A held-out days: {site_a['none']:.3f}, "
            f"{site_a['random']:.3f}, {site_a['amda']:.3f}; site shift up to "
            f"{cfg.site_shift:g}x): " + "; ".join(iv.text() for iv in ivs) + "."
        )
        return Decision(combine([iv.verdict() for iv in ivs]), stats, sentence, ivs)


register(AMDA())
