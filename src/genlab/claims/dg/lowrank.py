"""``dg.lowrank`` (Li et al. 2017, #17): a model whose layers are a shared part plus low-rank
domain-specific parts, with only the shared part applied to an unseen domain, generalizes better
than the same model trained on the pooled domains (ERM, the paper's "AGG" baseline), on a benchmark
of artier domains.

The catalogue's CPU design: "PACS-lite" from digits (``artier_digits``: photo, art painting,
cartoon, sketch), leave-one-domain-out, a small CNN, ERM vs the low-rank model, training-domain
validation, 5 seeds; the paper reports the average over the four held-out domains (its Table 4).
Differences from the paper (no official code in the code and docs corpora; the paper's was Caffe):
genlab's ``lowrank`` factorises the last layer only, as a matrix ``W + U_e V_e^T`` (the paper:
every layer, a Tucker decomposition of the stacked per-domain weights, initialised from the AGG
model), trains from scratch (the paper fine-tunes an ImageNet-pretrained AlexNet), uses Adam with
DomainBed's defaults and batch norm in the small CNN; selection by training-domain validation
(the paper: a held-out validation split of the source domains, as here).

No positive control (no configuration is known in which the small CNN fits the four depictions
and the low-rank parts must help), so the claim cannot record "not reproduced" (no control
licenses it). The smoke budget only checks that the code runs (``smoke_decides = False``): at 201
steps no arm fits (val 0.56-0.77 < 0.8, measured).
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
)
from genlab.claims.guards import Fit, Floor, Interval
from genlab.claims.search import with_draws
from genlab.design import Design
from genlab.report.claim_figures import ArmBars

DOMAINS = ("photo", "art_painting", "cartoon", "sketch")


class LowRankConfig(SearchedConfig):
    """ERM vs ``lowrank`` on ``artier_digits``, each domain held out in turn, paired by seed."""

    artier: bool = Field(True, description="False: four photo domains (no shift)")
    rank: int = Field(2, ge=1)
    steps: int = Field(501, ge=1)
    seeds: int = Field(5, ge=2)


class LowRank(Claim):
    """The shared part of a low-rank domain-factorised model beats ERM on unseen domains (#17)."""

    id = "dg.lowrank"
    papers = (
        Ref(
            17,
            "Li, Yang, Song & Hospedales 2017",
            "Deeper, broader and artier domain generalization",
        ),
    )
    statement = (
        "On artier_digits, averaged over the four held-out domains (training-domain validation), "
        "the low-rank model's shared part beats ERM by >= 0.01 with the paired 95% CI over seeds "
        "above 0. Not reproduced when the CI lies wholly below 0.01."
    )
    Config = LowRankConfig
    scope = "proxy"
    scope_note = (
        "PACS with an ImageNet-pretrained AlexNet whose every layer is Tucker-factorised replaced "
        "by artier_digits (a PACS-lite from 8x8 digits), a small CNN from scratch and a low-rank "
        "factorisation of the last layer only; at the full budget each arm at its best of 4 "
        "random-search draws (lr, batch size, the rank), picked by training-domain validation"
    )
    to_decide = (
        "Arms that fit: the small CNN trained from scratch reaches val 0.64-0.70 (bar 0.8), where "
        "the paper fine-tunes a pretrained AlexNet; a backbone that fits, then a positive control "
        "(none is known)."
    )
    budgets = {"smoke": {"steps": 201, "seeds": 3}, "full": {"search": SEARCH_FULL}}
    search_on = "val"
    smoke_decides = False  # 201 steps: no arm fits (measured), module docstring
    GAIN = 0.01  # fixed before running
    measures = {"heldout": HELDOUT, "val": VAL}
    fit = Fit("val", 0.8)
    floor = Floor("heldout", 0.15)
    figure = ArmBars("heldout", by=("domain", "method"))
    controls = {
        "negative": Control(
            {"artier": False},
            "not reproduced",
            "four photo domains: no domain "
            "idiosyncrasy for the low-rank parts to absorb (at the full budget, "
            "where these arms fit)",
            "full",
            heavy=True,
        ),
    }

    def arms(self, cfg: LowRankConfig):
        base = dg_spec({"name": "artier_digits", "params": {"artier": cfg.artier}}, SMALL_CNN, cfg)
        axes = {
            "domain": {d: {"task.params.test_envs": [i]} for i, d in enumerate(DOMAINS)},
            "method": {
                "erm": {},
                "lowrank": {"method": {"name": "lowrank", "params": {"rank": cfg.rank}}},
            },
        }
        design = Design(base, axes=axes, seeds=cfg.seeds)
        return with_draws(design.expand(), cfg.search, keep=())  # the rank drawn too

    def synthetic(self, cfg: LowRankConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: the low-rank model gains 0.03 on every held-out domain; null: no gain;
        unfit: the low-rank arms at val 0.5."""
        low = arm["method"] == "lowrank"
        gain = 0.03 * low if case != "null" else 0.0
        return {"heldout": 0.6 + gain, "val": 0.5 if case == "unfit" and low else 0.9}

    def decide(self, cfg: LowRankConfig, table: pd.DataFrame) -> Decision:
        iv = Interval.of(
            "low-rank - ERM", paired_gain(table, "method", "lowrank", "erm"), smallest=self.GAIN
        )
        per = table.groupby(["domain", "method"])["heldout"].mean().unstack()
        stats = {f"{d}_{m}": per.loc[d, m] for d in per.index for m in per.columns}
        stats["gain"] = iv.estimate
        hardest = per["erm"].idxmin() if "erm" in per else "?"
        sentence = (
            f"Held-out accuracy per domain, ERM / low-rank ({cfg.seeds} seeds, "
            f"{cfg.steps} steps): "
            + ", ".join(
                f"{d} {r.get('erm', float('nan')):.3f} / {r.get('lowrank', float('nan')):.3f}"
                for d, r in per.iterrows()
            )
            + f" (hardest for ERM: {hardest}); {iv.text()}."
        )
        return Decision(iv.verdict(), stats, sentence, [iv])


register(LowRank())
