"""``grokking.ungrokking`` (Varma et al. 2023, #116): generalizing circuits are more efficient than
memorizing ones only above a critical dataset size, so a network that has grokked, trained further
with weight decay on a subset of its training set well below that size, loses its test accuracy,
while a subset above it keeps it.

Embedding-MLP on modular addition mod 23 (the paper: mod 113, a one-layer transformer or an MLP),
full batch, AdamW; the ``subset_switch`` method trains on the full training set, then on its first
``keep`` examples. Semi-grokking is its own claim (``grokking.semi_grokking``).

Controls of Dec 3 2026 (issue #30). The positive control was the smoke budget itself (``{}``); it
is now other subsets, 0.15 and 0.5 of the table, on both sides of the critical size. The smoke
budget switches at step 1,200, which its seed reaches mid-transition (measured: test 0.774 at step
1,120, 0.896 at the switch, < 0.9: the "grokked before the switch" guard reads it inconclusive,
as it did this positive control at 0.15 / 0.5 and the negative control), so the smoke budget only
checks that the code runs (``smoke_decides = False``) and both controls switch at the full
budget's step 1,500, with as many steps after the switch.
"""

from __future__ import annotations

import math

import pandas as pd
from pydantic import Field, model_validator

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.grokking._common import TEST, TRAIN, MLPConfig, mlp_base
from genlab.claims.guards import Fit, NotApplicable
from genlab.claims.measures import Derived, Final, series
from genlab.design import Design
from genlab.report.claim_figures import Curves

# the controls switch where the full budget does, with as many steps after the switch as before
SWITCH = {"switch_step": 1500, "steps": 3000}
VARMA = Ref(
    116,
    "Varma, Shah, Kenton, Kram\u00e1r & Kumar 2023",
    "Explaining grokking through circuit efficiency",
)


def before_switch(split: str) -> Derived:
    """Accuracy on ``split`` at the last evaluation before the training set shrank
    (``optim/train_size``, logged by ``subset_switch``)."""

    def at(m: pd.DataFrame) -> float:
        size, acc = series(m, "optim", "train_size"), series(m, split, "accuracy")
        if size.empty or acc.empty:
            return math.nan
        return float(acc[acc.index <= size[size >= size.max()].index.max()].iloc[-1])

    return Derived(at, f"accuracy on {split} at the last evaluation on the full training set")


class UngrokkingConfig(MLPConfig):
    """Grok on ``train_fraction`` of the table, then continue on ``keep_fractions`` of it."""

    train_fraction: float = Field(0.6, gt=0, lt=1)
    keep_fractions: list[float] = Field(
        [0.1, 0.2, 0.3, 0.45], min_length=2, description="subset sizes, as fractions of the table"
    )
    switch_step: int = Field(1500, ge=1)
    steps: int = Field(4000, ge=2)

    @model_validator(mode="after")
    def _sizes(self) -> UngrokkingConfig:
        if any(not 0 < f < self.train_fraction for f in self.keep_fractions):
            raise ValueError(
                f"keep_fractions must lie in (0, train_fraction={self.train_fraction})"
            )
        if self.switch_step >= self.steps:
            raise ValueError("switch_step must be below steps")
        return self


class Ungrokking(Claim):
    """A grokked network trained on a too-small subset loses test accuracy (Varma et al., #116)."""

    id = "grokking.ungrokking"
    papers = (VARMA,)
    statement = (
        "Every run has >= 90% test accuracy at the switch (it grokked); after continued training "
        "with weight decay on the smallest subset the median final test accuracy is < 50% "
        "(ungrokking), and on the largest subset it stays >= 90%. Smallest ungrokks but largest "
        "does not retain: inconclusive (the critical size is not bracketed)."
    )
    Config = UngrokkingConfig
    scope = "proxy"
    scope_note = (
        "Varma et al. ungrok one-layer transformers on modular addition mod 113; here an "
        "embedding-MLP on mod 23 (full-batch AdamW), the subset switch at a fixed step."
    )
    smoke_decides = False  # the smoke switch (step 1,200) comes mid-transition (measured)
    budgets = {
        "smoke": {"keep_fractions": [0.1, 0.45], "seeds": 1, "switch_step": 1200, "steps": 2400},
        "full": {},
    }
    GROKKED, UNGROKKED = 0.9, 0.5
    measures = {
        "train_at_switch": before_switch(TRAIN),
        "test_at_switch": before_switch(TEST),
        "test": Final(TEST),
    }
    fit = Fit("train_at_switch", 0.99)
    extra_guards = (Fit("test_at_switch", GROKKED),)  # grokked before the switch
    floor = NotApplicable("floor", "the smallest subset falling to chance is the effect")
    aggregate = "median"
    figure = Curves((TEST,), by="keep_fraction", logx=False)
    controls = {
        "negative": Control(
            {"keep_fractions": [0.45, 0.55], **SWITCH},
            "not reproduced",
            "subsets above the critical size: the generalizing circuit stays the "
            "more efficient one, so no subset ungrokks",
            slow=True,
        ),
        "positive": Control(
            {"keep_fractions": [0.15, 0.5], **SWITCH},
            "reproduced",
            "other subsets on "
            "both sides of the critical size (between 0.3 and 0.45 at the full "
            "budget): 0.15 of the table ungrokks, 0.5 retains",
            slow=True,
        ),
    }

    def arms(self, cfg: UngrokkingConfig):
        base = mlp_base(cfg, cfg.train_fraction, evals=cfg.steps * 15 // cfg.switch_step)
        keep = {
            f: {
                "method": {
                    "name": "subset_switch",
                    "params": {"switch_step": cfg.switch_step, "keep": max(1, round(f * cfg.p**2))},
                }
            }
            for f in sorted(cfg.keep_fractions)
        }
        return Design(base, axes={"keep_fraction": keep}, seeds=cfg.seeds).expand()

    def synthetic(self, cfg: UngrokkingConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: every run grokked (test 0.99 at the switch), the smallest subset ends at 0.02,
        the others at 0.99; null: every subset keeps 0.99; unfit: the largest had not fit the
        training set at the switch (train 0.5)."""
        keep = sorted(cfg.keep_fractions).index(arm["keep_fraction"])
        large = keep == len(cfg.keep_fractions) - 1
        return {
            "train_at_switch": 0.5 if case == "unfit" and large else 1.0,
            "test_at_switch": 0.99,
            "test": 0.02 if keep == 0 and case != "null" else 0.99,
        }

    def decide(self, cfg: UngrokkingConfig, table: pd.DataFrame) -> Decision:
        med = table.groupby("keep_fraction")["test"].median().sort_index()
        ungrok, retain = bool(med.iloc[0] < self.UNGROKKED), bool(med.iloc[-1] >= self.GROKKED)
        verdict = (
            "reproduced" if ungrok and retain else "inconclusive" if ungrok else "not reproduced"
        )
        stats = {f"median_final_test_acc@{f:g}": v for f, v in med.items()}
        sentence = (
            "Median final test accuracy by subset fraction: "
            + ", ".join(f"{f:g}: {v:.3f}" for f, v in med.items())
            + f" (grokked on {cfg.train_fraction} of p={cfg.p}, switch at step "
            f"{cfg.switch_step} of {cfg.steps}, weight decay {cfg.weight_decay})."
        )
        return Decision(verdict, stats | {"ungrokks": ungrok, "retains": retain}, sentence)


register(Ungrokking())
