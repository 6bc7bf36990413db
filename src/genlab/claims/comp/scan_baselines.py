"""``comp.scan_baselines``: SCAN's famous failures — a recurrent encoder-decoder trained from
scratch solves the random split and fails the length and add-primitive-jump splits (Lake &
Baroni 2018, "Generalization without systematicity", the results Zhou, Jiang & Bansal #54 start
from: SCAN "exposes severe problems in models trained from scratch").

Differences from Lake & Baroni: one LSTM with attention (128 units, the ``scan-*`` presets), not
their search over 180 networks; Adam 2e-3 with batches of 64 for 3,000 steps with a 100-step
warm-up and a cosine decay (192k examples; they take 100k single-example updates at 1e-3) with
full teacher forcing instead of their 50%; greedy exact match on a random 1,000 test commands
(all of simple's 4,182 and jump's 7,706 cost minutes to decode on 2 cores).

Fit (Dec 4 2026, issue #31): Lake & Baroni's networks fit their training commands above 99%; at
1,500 constant-rate steps this one reached val 0.945 on simple, so the failures partly measured the
training budget. Piloted on seed 0 (one thread, 300 test commands) before the change: 1,500 cosine
steps fit simple to val 0.988 (test 1.000); 3,000 cosine steps fit every split to val 1.000, with
test exact match simple 1.000, length 0.137, addprim_jump 0.000 (Lake & Baroni: 0.998, 0.138-0.208,
0.0008-0.012), addprim_turn_left 0.587 (theirs 0.903), 190-280 s a run; without attention (the
positive control) simple fits too (val 0.998, test 1.000). Nothing else was piloted.

Measured history (the negative control's seeds): docs/compositional.md (comp.scan_baselines).

Controls (Dec 3 2026, issue #30): the positive control was the claim itself; it became the claim
trained twice as long (3,000 steps), and with the claim at 3,000 steps (Dec 4) it is the network
without attention, the kind of Lake & Baroni's overall-best network.
"""

from __future__ import annotations

from typing import Literal

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.comp._common import LSTM, TrainConfig, spec
from genlab.claims.guards import Fit, Floor, Interval, combine
from genlab.claims.measures import Final
from genlab.design import Design
from genlab.report.claim_figures import ArmBars

Split = Literal["simple", "length", "addprim_jump", "addprim_turn_left"]
# Lake & Baroni (2018), exact match of their overall-best network (LSTM, 2 x 200, no attention,
# dropout 0.5) and of the best network per split. Only simple's 99.8% (best per split) was checked
# against a stored copy of the paper's text; the others are quoted from memory (docs/compositional).
PUBLISHED = {
    "simple": (0.997, 0.998),
    "length": (0.138, 0.208),
    "addprim_jump": (0.0008, 0.012),
    "addprim_turn_left": (0.903, float("nan")),
}


class ScanBaselinesConfig(TrainConfig):
    splits: tuple[Split, ...] = Field(("simple", "length", "addprim_jump"), min_length=2)
    hidden: int = Field(128, ge=1)
    attention: bool = Field(True, description="attention in the decoder")
    warmup: int = Field(100, ge=0, description="warm-up steps before the cosine decay")
    n_test: int = Field(1000, ge=1, description="test commands decoded per split")
    solved: float = Field(0.9, gt=0, le=1, description="simple: CI above this")
    failed: float = Field(0.3, gt=0, le=1, description="length / add-primitive: CI below this")


class ScanBaselines(Claim):
    """Random split solved, length and add-jump far below (Lake & Baroni 2018; #54)."""

    id = "comp.scan_baselines"
    papers = (
        Ref(
            54,
            "Zhou, Jiang & Bansal 2023 (citing Lake & Baroni 2018)",
            "Data factors for better compositional generalization",
        ),
    )
    statement = (
        "Over 3 seeds, an LSTM encoder-decoder with attention, fit to its training commands "
        "(val exact match >= 0.99, as Lake & Baroni's networks), reaches exact match with its "
        "95% CI above 0.9 on SCAN's simple split and below 0.3 on the length and add-primitive "
        "(jump) splits."
    )
    Config = ScanBaselinesConfig
    scope = "paper"
    smoke_decides = False  # 2 seeds, and 200 steps of a 32-unit LSTM fit nothing
    budgets = {
        "smoke": {"steps": 200, "hidden": 32, "n_test": 100, "seeds": 2},
        "full": {"steps": 3000},
    }
    measures = {"val": Final("val/main", "exact_match"), "test": Final("test/*", "exact_match")}
    fit = Fit("val", 0.99)
    floor = Floor("test", 0.02)
    figure = ArmBars("test", by="split", lines=(("solved", 0.9), ("far below", 0.3)))
    controls = {
        "negative": Control(
            {"splits": ("simple", "addprim_turn_left"), "seeds": 8},
            "not reproduced",
            "Lake & Baroni: the add-primitive 'turn left' split is largely solved "
            "(turn left is seen composed as a direction), so 'far below' fails; "
            "8 seeds, as the 3-seed spread (0.302-0.528) requires for a CI to "
            "clear 0.3 at a mean near 0.4",
            budget="full",
            heavy=True,
        ),
        "positive": Control(
            {"attention": False},
            "reproduced",
            "the decoder without attention, the kind of Lake & Baroni's "
            "overall-best network (99.7% simple, 13.8% length, 0.08% jump): "
            "by their account the pattern does not hang on attention, so it must show",
            budget="full",
            heavy=True,
        ),
    }

    def arms(self, cfg: ScanBaselinesConfig):
        task = {"n_val": 500, "n_test": cfg.n_test}
        model = {**LSTM, "hidden": cfg.hidden, "attention": cfg.attention}
        base = spec(cfg, "scan", task, "seq2seq_rnn", model, ("exact_match",))
        base["optimizer"] |= {"decay": "cosine", "warmup_steps": cfg.warmup}
        split = {s: {"task.split": s} for s in cfg.splits}
        return Design(base, axes={"split": split}, seeds=cfg.seeds).expand()

    def synthetic(self, cfg: ScanBaselinesConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: simple 0.97, every other split 0.08; null: the other splits 0.6 (solved as
        well); unfit: as effect, the other splits at val 0.5."""
        simple = arm["split"] == "simple"
        test = 0.97 if simple else (0.6 if case == "null" else 0.08)
        return {"val": 0.5 if case == "unfit" and not simple else 0.995, "test": test}

    def decide(self, cfg: ScanBaselinesConfig, table: pd.DataFrame) -> Decision:
        ivs, stats, parts = [], {}, []
        for s in cfg.splits:
            v = table.loc[table["split"] == s, "test"].tolist()
            if s == "simple":
                iv = Interval.of(s, v, null=cfg.solved, smallest=cfg.solved)
            else:
                iv = Interval.of(s, v, null=cfg.failed, smallest=cfg.failed, above=False)
            ivs.append(iv)
            overall, best = PUBLISHED[s]
            stats |= {s: iv.estimate, f"{s}_published_overall_best": overall}
            parts.append(
                f"{s} {iv.estimate:.3f} [{iv.lo:.3f}, {iv.hi:.3f}] (Lake & Baroni: "
                f"overall-best {overall:.4g}, best {best:.4g})"
            )
        sentence = (
            f"Exact match over {cfg.seeds} seeds: {'; '.join(parts)}; solved means CI "
            f"above {cfg.solved:g}, failed CI below {cfg.failed:g}."
        )
        return Decision(combine([iv.verdict() for iv in ivs]), stats, sentence, ivs)


register(ScanBaselines())
