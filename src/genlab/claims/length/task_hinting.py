"""``length.task_hinting`` (Awasthi & Gupta 2023, #92): sorting trained together with an auxiliary
hint task extrapolates to longer sequences far better than sorting trained alone.

Both arms train the same transformer on ``seq_sort_hint`` (distinct integers, teacher forcing),
one with the hint task mixed into every batch; tests are sorting alone. No official code found
(searched GitHub code, issues and pages for the paper, its title and authors), so the protocol
follows the paper's text. The hint is the paper's best one (identity + successor); the method is
plain multi-task training, not a reconstruction. Differences from the paper:

- scale: a 2-layer d=64 NoPE model (the paper's model and positional encoding are not matched),
  train lengths <= 8 and tests to 32 (the paper: <= 20, tested at 100);
- data: distinct integers (the successor must be defined; the paper's headline 92% is with
  repetitions), a fixed sample of 2,000 sorting + 2,000 hint examples;
- metric and aggregation: exact match of the whole sorted output (the paper's), but averaged
  over 4 test lengths 9/17/24/32 (the paper reports each length, its headline at the longest),
  per seed, 5 seeds with a 95% t-CI;
- none of its "length-dependent parameters" (the tempered softmax).

Measured history (the paper's premise at 5x, the learned-positions attempt at a positive
control): docs/length_generalization.md (length.task_hinting).

Judge change (Dec 3 2026, issue #30): a refutation now reads only the arms of one interval that
refutes it, the first whose arms fit (``Decision.reads``, ``LengthClaim.refuting``: the hint arm
for its level, both arms for the gap), so an arm it does not read that did not fit no longer hides
it; "reproduced" still needs both arms to fit. The recorded full results were known (both arms fit:
gap -0.105 [-0.32, 0.11] over 5 seeds, below 0.2). No positive control is known (learned positions
to 20: gap +0.155 [0.030, 0.279], short of 0.2), so the claim cannot record "not reproduced": no
control licenses it. Its smoke budget (2 seeds) only checks that the code runs.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from genlab.claims import register
from genlab.claims.base import Case, Control, Ref
from genlab.claims.length._common import LengthClaim, LengthConfig, beats, lengths
from genlab.report.claim_figures import LengthCurves


class HintConfig(LengthConfig):
    """Task, model and budget of ``length.task_hinting``."""

    hint_task: Literal["successor", "count_smaller"] = Field("successor")
    alphabet_size: int = Field(40, ge=2, description="distinct integers (drawn without repeats)")
    test_max: int = Field(32, ge=2, description="the paper tests at 5x the training length")
    n_train: int = Field(2000, ge=10, description="sorting examples (as many hint examples)")

    @model_validator(mode="after")
    def _alphabet(self) -> HintConfig:
        if self.alphabet_size < self.test_max:
            raise ValueError(
                f"alphabet_size ({self.alphabet_size}) must be >= test_max ({self.test_max})"
            )
        return self


class TaskHinting(LengthClaim):
    """Sorting with an auxiliary hint task extrapolates far better than without (#92)."""

    id = "length.task_hinting"
    papers = (
        Ref(
            92,
            "Awasthi & Gupta 2023",
            "Improving length-generalization in transformers via task hinting",
        ),
    )
    statement = (
        "A decoder-only transformer sorting distinct integers, trained on lengths <= L (both arms "
        "fitting: val exact match >= 0.9) and scored by exact match averaged over longer lengths "
        "(per seed): trained with the successor hint it reaches a mean >= 0.5 (95% CI above 0) "
        "and beats sorting alone by >= 0.2 (paired CI above 0). Not reproduced when either CI "
        "lies below its level."
    )
    Config = HintConfig
    scope = "proxy"
    scope_note = (
        "Awasthi & Gupta sort integers with repetitions, train on <= 20 and test at 100, "
        "with length-dependent tempered softmax; genlab sorts distinct integers with a "
        "2-layer d=64 NoPE model, trains on <= 8, tests to 32, without it."
    )
    smoke_decides = False
    budgets = {
        "smoke": {
            "alphabet_size": 12,
            "train_length": 4,
            "test_max": 8,
            "n_test_lengths": 2,
            "n_train": 500,
            "n_test": 50,
            "d_model": 32,
            "steps": 400,
            "lr": 3e-3,
            "seeds": 2,
        },
        "full": {"steps": 2000, "lr": 2e-3, "seeds": 5},
    }
    figure = LengthCurves(line="hint", train_length="auto")
    controls = {
        "negative": Control(
            {"hint_task": "count_smaller", "seeds": 4},
            "not reproduced",
            "Awasthi & Gupta: "
            "hints differ sharply in value; counting the smaller elements does "
            "not give the successor structure sorting extrapolates with",
            slow=True,
        ),
    }

    def arms(self, cfg: HintConfig):
        task = {
            "name": "seq_sort_hint",
            "params": {
                **lengths(cfg),
                "hint_task": cfg.hint_task,
                "alphabet_size": cfg.alphabet_size,
            },
        }
        axes = {"hint": {h: {"task.params.hint": h != "alone"} for h in ("alone", cfg.hint_task)}}
        return self.design(cfg, task, axes)

    def synthetic(self, cfg: HintConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: the hint arm extrapolates (0.8), sorting alone not (0.1); null: both at 0.1;
        unfit: as effect, sorting alone not fitting."""
        hint = arm["hint"] == cfg.hint_task
        return self.values(0.8 if hint and case != "null" else 0.1, case != "unfit" or hint)

    def decide(self, cfg: HintConfig, table):
        ivs = beats(table, "hint", cfg.hint_task, "alone", 0.5, 0.2)
        return self.decision(
            ivs,
            cfg,
            table,
            "hint",
            [cfg.hint_task, "alone"],
            reads=[cfg.hint_task, [cfg.hint_task, "alone"]],
        )


register(TaskHinting())
