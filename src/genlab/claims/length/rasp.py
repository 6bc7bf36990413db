"""``length.rasp`` (Zhou et al. 2024, #37): a transformer length-generalizes on the tasks a short
RASP-L program solves at every length (copy with unique tokens, sort) and not on the others (copy
with repeated tokens, parity).

Differences from the paper (its code, apple/ml-np-rasp, holds the RASP-L interpreter and program
listings, not the training runs): 2 layers of d=64 instead of the paper's larger models, train
lengths <= 8 and test 9..16, a fixed training sample, NoPE; parity is the classification task of
``formal_language`` (chance 0.5), so every task is scored above chance, (acc - chance) / (1 -
chance).

Judge change (Dec 3 2026, issue #30): the audit found that a refutation was hidden by the fit guard
on every arm: at full copy_unique fits (val 0.957) and scores 0.238 [0.09, 0.38] above chance,
below 0.5, recorded inconclusive only because copy_repeat (0.897) and parity (0.882) fell short of
0.9. A refutation now reads only the task of one interval that refutes it, the first that fits
(``Decision.reads``, ``LengthClaim.refuting``), so the fit guard judges it alone; "reproduced"
still needs every task to fit. The recorded results were known. The smoke budget (2 seeds;
copy_unique did not fit, val 0.87) only checks that the code runs.

Positive control (Dec 3 2026, issue #30; the claim's results had been seen): sort against copy with
repeated tokens, trained up to 6,000 steps (``tasks = [sort, copy_repeat]``, its own runs), so that
a measured "not reproduced" can be licensed. Measured once before it was added (a side store, 3
seeds, reproduced): sort 0.975 above chance (seeds 0.990, 0.998, 0.938; val 1.000), copy_repeat
0.124 (0.140, 0.095, 0.137; val 0.907, just above the 0.9 fit level). It shows the setting and judge can find the
conjectured split; it leaves out copy with unique tokens, the task the refutation rests on. (Before
it, no positive control was known: at full copy_repeat and parity fell just short of fitting; at the
smoke budget with sort and parity over 3 seeds sort reached only 0.387.)
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from genlab.claims import register
from genlab.claims.base import Case, Control, Ref
from genlab.claims.length._common import LengthClaim, LengthConfig, lengths, reaches, stays_below
from genlab.report.claim_figures import LengthCurves

Task = Literal["copy_unique", "sort", "copy_repeat", "parity"]
SHORT_PROGRAM = {"copy_unique": True, "sort": True, "copy_repeat": False, "parity": False}
CHANCE = {"parity": 0.5}  # exact match by guessing: one binary answer; whole strings ~0


def task_spec(name: str, cfg: LengthConfig) -> dict[str, Any]:
    if name == "parity":
        return {"name": "formal_language", "params": {**lengths(cfg), "task": "parity_check"}}
    extra = (
        {"op": "copy", "unique": True, "alphabet_size": max(10, cfg.test_max)}
        if name == "copy_unique"
        else {"op": "copy", "alphabet_size": 3}
        if name == "copy_repeat"
        else {"op": "sort"}
    )
    return {"name": "seq_string", "params": {**lengths(cfg), **extra}}


class RaspConfig(LengthConfig):
    """Tasks, model and budget of ``length.rasp``."""

    tasks: list[Task] = Field(default_factory=lambda: list(SHORT_PROGRAM))

    @model_validator(mode="after")
    def _groups(self) -> RaspConfig:
        if {SHORT_PROGRAM[t] for t in self.tasks} != {True, False}:
            raise ValueError("tasks must include one with and one without a short RASP-L program")
        return self


class Rasp(LengthClaim):
    """Tasks with short RASP-L programs length-generalize, others do not (Zhou et al., #37)."""

    id = "length.rasp"
    papers = (
        Ref(
            37,
            "Zhou, Bradley, Littwin, Razin, Saremi, Susskind, Bengio & Nakkiran 2024",
            "What algorithms can transformers learn? A study in length generalization",
        ),
    )
    statement = (
        "A decoder-only transformer trained on lengths <= L, every task fitting (val exact match "
        ">= 0.9), scored by exact match above chance averaged over lengths up to 2L (per seed): "
        "every task with a short RASP-L program (copy with unique tokens, sort) reaches a mean "
        ">= 0.5 (95% CI above 0.2) and every other task (copy with repeated tokens, parity) stays "
        "<= 0.2 (CI below 0.5). Not reproduced when a RASP-L task's CI lies below 0.5 or another "
        "task's above 0.2."
    )
    Config = RaspConfig
    scope = "proxy"
    scope_note = (
        "Zhou et al. train 4-layer d=128 decoder-only transformers on lengths <= 20 and "
        "test 21-40; genlab trains 2 layers of d=64 (NoPE) on <= 8, tests 9-16, and "
        "poses parity as a one-token classification (formal_language)."
    )
    smoke_decides = False
    budgets = {
        "smoke": {
            "tasks": ["copy_unique", "copy_repeat"],
            "train_length": 3,
            "test_max": 6,
            "n_test_lengths": 2,
            "n_train": 500,
            "n_test": 50,
            "d_model": 32,
            "steps": 600,
            "lr": 3e-3,
            "seeds": 2,
        },
        "full": {"steps": 3000, "lr": 2e-3},
    }
    figure = LengthCurves(line="task", train_length="auto")
    controls = {
        "negative": Control(
            {"positional": "learned"},
            "not reproduced",
            "learned absolute "
            "positions are untrained beyond L, so no program that reads them "
            "can run there: the RASP-L tasks must fail too",
        ),
        "positive": Control(
            {"tasks": ["sort", "copy_repeat"], "steps": 6000},
            "reproduced",
            "the paper's contrast on one task of each group, trained twice as "
            "long so that copying with repeated tokens fits (at 3,000 steps its "
            "val is just short of 0.9): sort has a short RASP-L program valid at "
            "every length (in the paper's listings), so by the conjecture it "
            "extrapolates, while copying with repeats has none (the induction "
            "head's match is ambiguous), so it does not. It shows that this "
            "model, these lengths and this judge can find a RASP-L task "
            "extrapolating and another not; copy with unique tokens is left out, "
            "so it says nothing of that task",
            budget="full",
            heavy=True,
        ),
    }

    def arms(self, cfg: RaspConfig):
        axes = {"task": {t: {"task": task_spec(t, cfg)} for t in cfg.tasks}}
        return self.design(cfg, task_spec(cfg.tasks[0], cfg), axes)

    def synthetic(self, cfg: RaspConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: the RASP-L tasks extrapolate (0.9 above chance), the others stay at chance;
        null: every task at chance; unfit: as effect, the first task not fitting."""
        chance, good = CHANCE.get(arm["task"], 0.0), SHORT_PROGRAM[arm["task"]] and case != "null"
        fit = case != "unfit" or arm["task"] != cfg.tasks[0]
        return self.values(chance + (0.9 * (1 - chance) if good else 0.0), fit)

    def decide(self, cfg: RaspConfig, table):
        chance = table["task"].map(lambda t: CHANCE.get(t, 0.0))
        score = ((table["ood"] - chance) / (1 - chance)).groupby(table["task"])
        ivs = [
            reaches(f"{t} above chance", score.get_group(t), 0.5, null=0.2)
            if SHORT_PROGRAM[t]
            else stays_below(f"{t} above chance", score.get_group(t), 0.2, null=0.5)
            for t in cfg.tasks
        ]
        return self.decision(ivs, cfg, table, "task", cfg.tasks, reads=cfg.tasks)


register(Rasp())
