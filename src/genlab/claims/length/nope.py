"""``length.nope`` (Kazemnejad et al. 2023, #100): without positional encoding (NoPE), or with T5's
relative bias, a decoder-only transformer extrapolates to longer inputs better than with absolute
(APE) or rotary (RoPE) encodings.

The paper ranks the encodings on every task and length bucket and reports the mean rank (its
Figures 1-2, after Liang et al.'s HELM); here the reciprocal rank of each encoding's exact match
(seed mean) is averaged over every task x test length beyond training (ties share their rank;
cells where every encoding ties carry no ranking and are left out). Differences from the paper's
code (McGill-NLP/length-generalization): a 2-layer d=64 model instead of HuggingFace "base" (12
layers, d 768) at lr 3e-5 for 40k steps with dropout 0.1; copy and reverse of 20 symbols drawn
without repeats (the paper: words of a ~50k vocabulary), train lengths <= 8 and test 9..16 (the
paper: <= 20 and U(1, 2L)), 2 tasks instead of 10, a fixed training sample; APE is sinusoidal, as
in the paper (a learned table cannot embed unseen positions); the mean reciprocal rank rather
than HELM's mean win rate (the aggregation the issue asks for).

Judge change (Dec 3 2026, issue #30): a refutation (a pair's CI below 0.1) now reads only the
encodings its ranks rest on (``Decision.reads``): the pair and every encoding at or above the lower
of the two in some ranked cell (one ranked below both in every cell changes neither rank), those of
the first refuted pair that all fit, so the fit and floor guards judge those alone; "reproduced"
still needs every encoding to fit. The recorded results were known (full: inconclusive). A positive
control is added (the negative control's two encodings the other way round: Hard-ALiBi ranked ahead
of learned APE), so a "not reproduced" can be recorded. Both controls now train at the full budget's
width (64): at the smoke width learned APE did not fit copy (val 0.893); at 64, measured Dec 3 2026,
the negative comes out "not reproduced" and the positive "reproduced" (out-of-range exact match
Hard-ALiBi 0.830, learned 0.005). The smoke budget (NoPE did not fit, val 0.66; two ranked cells)
only checks that the code runs.

Budget change (Dec 4 2026, issue #36: "find the setting that fits"; recorded in claims.lock as made
after a result): the full budget trains 10,000 steps instead of 4,000, because at 4,000 reverse/none
and reverse/alibi missed the fit bar (val 0.865 / 0.880). Pilot before the change, the two arms at
both seeds with nothing else changed (``claim.config("full", {"ops": ["reverse"], "ahead":
["none"], "behind": ["alibi"], "others": [], "steps": 10000})``, 405 s on 2 workers): val exact
match 0.905-0.945 at 8,000 steps and 0.925-0.95 at 10,000 (it swings by up to 0.05 between
evaluations at the constant learning rate, so 8,000 would sit on the bar). Arms that reach 0.99
stop early, so the added steps cost only the arms that have not fitted. Thresholds, arms, seeds and
controls are unchanged; only the pilot's val curves were seen, not any out-of-range result.
Measured at full (fresh store, seeds 2 -> 4 by the seed rule): every encoding fits; MRR ALiBi
0.889, T5 0.444, RoPE 0.380, NoPE 0.347, APE 0.216; RR(T5) - RR(APE) 0.229 [0.119, 0.338] holds,
the other three pairs straddle (RR(NoPE) - RR(RoPE) -0.032 [-0.521, 0.456]): inconclusive. Its
intervals are over the 6 ranked task x length cells, not seeds, so more seeds barely narrow them;
deciding the pair RR(NoPE) - RR(APE) at the observed spread needs about 160 ranked cells (tasks x
lengths), and the two pairs with RoPE sit on the threshold: far past 2 tasks x 4 lengths. Wall
4,759 s (CPU 5,464 s), two single-threaded pilots sharing the cores for its last 50 minutes; over
the 20-minute aim.
"""

from __future__ import annotations

import math
from typing import Literal

import pandas as pd
from pydantic import Field, model_validator

from genlab.claims import register
from genlab.claims.base import Case, Control, Decision, Ref
from genlab.claims.guards import Floor, Interval, combine
from genlab.claims.length._common import LengthClaim, LengthConfig, at_length, lengths
from genlab.models.positional import PositionalName
from genlab.report.claim_figures import LengthCurves

CELLS = 4  # test lengths ranked per task (n_test_lengths <= CELLS)


class NoPEConfig(LengthConfig):
    """Tasks, encodings and budget of ``length.nope``."""

    ops: list[Literal["copy", "reverse", "sort"]] = Field(
        default_factory=lambda: ["copy", "reverse"]
    )
    ahead: list[PositionalName] = Field(
        default_factory=lambda: ["none", "t5"], description="encodings the claim ranks ahead"
    )
    behind: list[PositionalName] = Field(
        default_factory=lambda: ["sinusoidal", "rope"],
        description="encodings the claim ranks behind",
    )
    others: list[PositionalName] = Field(
        default_factory=lambda: ["alibi"], description="ranked too, not judged (ALiBi: mid-pack)"
    )
    alphabet_size: int = Field(20, ge=2)
    unique: bool = Field(
        True,
        description="no repeated symbol in a string, as the paper's words "
        "drawn from a ~50k vocabulary almost never repeat",
    )
    n_test_lengths: int = Field(4, ge=1, le=CELLS)

    @model_validator(mode="after")
    def _arms(self) -> NoPEConfig:
        if not self.ahead or not self.behind or set(self.ahead) & set(self.behind):
            raise ValueError("ahead and behind must be non-empty and disjoint")
        return self


class NoPE(LengthClaim):
    """NoPE and T5's relative bias rank ahead of APE and RoPE beyond training (#100)."""

    id = "length.nope"
    papers = (
        Ref(
            100,
            "Kazemnejad, Padhi, Natesan Ramamurthy, Das & Reddy 2023",
            "The impact of positional encoding on length generalization in transformers",
        ),
    )
    statement = (
        "Decoder-only transformers trained on copy/reverse of lengths <= L, each encoding fitting "
        "its training lengths (val exact match >= 0.9), ranked by exact match (seed mean) on every "
        "task x test length in L+1..2L: for every pair (a in ahead = NoPE, T5; b in behind = APE, "
        "RoPE) the mean reciprocal-rank difference RR(a) - RR(b) over those cells is >= 0.1 with "
        "its 95% CI above 0. Not reproduced when the CI of some pair lies below 0.1."
    )
    Config = NoPEConfig
    scope = "proxy"
    scope_note = (
        "Kazemnejad et al. train 12-layer d=768 decoder-only models on 10 tasks and rank "
        "encodings by HELM's mean win rate; genlab trains 2 layers of d=64 on copy and "
        "reverse of 20 symbols (<= 8, tested to 16) and ranks by mean reciprocal rank."
    )
    smoke_decides = False
    MARGIN = 0.1
    budgets = {
        "smoke": {
            "ops": ["copy"],
            "others": [],
            "train_length": 4,
            "test_max": 6,
            "n_test_lengths": 2,
            "n_train": 1000,
            "n_test": 50,
            "d_model": 32,
            "steps": 1000,
            "lr": 3e-3,
            "seeds": 2,
        },
        "full": {"lr": 3e-3, "steps": 10000, "seeds": 2},
    }
    measures = {**LengthClaim.measures, **{f"len_{i}": at_length(i) for i in range(CELLS)}}
    floor = Floor("ood", 0.05)  # every encoding at ~0 beyond training: nothing to rank
    figure = LengthCurves(panel="op", line="positional", train_length="auto")
    controls = {
        "negative": Control(
            {"ahead": ["learned"], "behind": ["hard_alibi"], "d_model": 64},
            "not reproduced",
            "a "
            "learned absolute table cannot embed unseen positions (why Kazemnejad et al. use "
            "sinusoidal APE), while Hard-ALiBi's one-token window gives copying an induction head "
            "that works at any length (Jelassi et al.): ranking APE ahead of it must be refuted. "
            "At the full budget's width (64): at the smoke width (32) learned APE did not fit "
            "(val 0.893 over 2 seeds; measured inconclusive, Dec 3 2026)",
            slow=True,
        ),
        "positive": Control(
            {"ahead": ["hard_alibi"], "behind": ["learned"], "d_model": 64},
            "reproduced",
            "the "
            "negative control's encodings the other way round: Hard-ALiBi's induction head copies "
            "at any length, learned APE has no embedding for unseen positions, so ranking "
            "Hard-ALiBi ahead must hold (the same two runs, judged for the opposite order)",
            slow=True,
        ),
    }

    def arms(self, cfg: NoPEConfig):
        pes = [*cfg.ahead, *cfg.behind, *cfg.others]
        task = {
            "name": "seq_string",
            "params": {**lengths(cfg), "alphabet_size": cfg.alphabet_size, "unique": cfg.unique},
        }
        axes = {
            "op": {op: {"task.params.op": op} for op in cfg.ops},
            "positional": {pe: {"model.params.positional": pe} for pe in pes},
        }
        return self.design(cfg, task, axes)

    def synthetic(self, cfg: NoPEConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: the ahead encodings at 0.9, 0.85, .. beyond training at every length, the
        others 0.5, the behind ones 0.3, 0.25, ..; null: ahead and behind swapped; unfit: as
        effect, the first ahead encoding not fitting."""
        pe = arm["positional"]
        ahead, behind = (cfg.ahead, cfg.behind) if case != "null" else (cfg.behind, cfg.ahead)
        acc = (
            0.9 - 0.05 * ahead.index(pe)
            if pe in ahead
            else 0.3 - 0.05 * behind.index(pe)
            if pe in behind
            else 0.5
        )
        cells = {f"len_{i}": acc if i < cfg.n_test_lengths else math.nan for i in range(CELLS)}
        return {**self.values(acc, case != "unfit" or pe != cfg.ahead[0]), **cells}

    def decide(self, cfg: NoPEConfig, table: pd.DataFrame) -> Decision:
        cells = [f"len_{i}" for i in range(cfg.n_test_lengths)]
        acc = table.groupby(["op", "positional"])[cells].mean().stack().unstack("positional")
        acc = acc[acc.nunique(axis=1) > 1]  # a cell where every encoding ties ranks nothing
        rr = 1.0 / acc.rank(axis=1, ascending=False, method="average")
        pairs = [(a, b) for a in cfg.ahead for b in cfg.behind]
        ivs = [
            Interval.of(
                f"RR({a}) - RR({b})", (rr[a] - rr[b]).tolist(), null=0.0, smallest=self.MARGIN
            )
            for a, b in pairs
        ]
        # a refuted pair's ranks rest on the pair and on the encodings at or above its lower one
        refuted = [
            [pe for pe in acc.columns if (acc[pe] >= acc[[a, b]].min(axis=1)).any()]
            for (a, b), iv in zip(pairs, ivs, strict=True)
            if iv.verdict() == "not reproduced"
        ]
        mrr = rr.mean()
        ood = table.groupby("positional")["ood"].mean()
        stats = {f"mrr_{pe}": mrr.get(pe, float("nan")) for pe in ood.index}
        stats |= {f"ood_{pe}": v for pe, v in ood.items()} | {"ranked_cells": len(rr)}
        sentence = (
            f"Mean reciprocal rank of exact match over {len(rr)} ranked task x length cells "
            f"({', '.join(cfg.ops)}; train <= {cfg.train_length}, test to {cfg.test_max}): "
            + ", ".join(f"{pe} {stats[f'mrr_{pe}']:.3f}" for pe in ood.index)
            + "; out-of-range exact match "
            + ", ".join(f"{pe} {v:.3f}" for pe, v in ood.items())
            + "."
        )
        reads = self.refuting(table, "positional", refuted) if refuted else None
        return Decision(combine([iv.verdict() for iv in ivs]), stats, sentence, ivs, reads)


register(NoPE())
