"""``length.chomsky`` (Delétang et al. 2023, #62): a task's level in the Chomsky hierarchy predicts
which architecture extrapolates to longer inputs, scored as in the paper's Table 2.

Protocol as in the paper's code (google-deepmind/neural_networks_chomsky_hierarchy,
``experiments/training.py``, ``range_evaluation.py``, ``example.py``): fresh training batches every
step, one length per batch drawn uniformly from ``1..train_length`` (``formal_language`` with
``fresh``); Adam with the global gradient norm clipped at 1; a cell's score is the masked per-token
accuracy at each test length averaged over the test lengths, maximised over seeds x learning rates;
"solved" at >= 90%. The transformer is an encoder (``transformer_encoder``) and the tape RNN
writes on every action. Every arm must fit its training lengths (val
per-token >= 0.9, best run): a must-fail arm that never learned the training lengths says nothing
about extrapolation.

Remaining differences from the paper, for a 2-core CPU: train <= 10 and 6 test lengths on an even
grid over 11-100 (paper: <= 40, every length 41-500; the ratio 10x against 12.5x), 64 test examples
per length (512), 3 seeds x 2 learning rates 1e-3, 3e-3 (10 seeds x 3 lrs), batch 32 for 2,500 steps
(128 for 10^6), hidden 64 (256), a 2-layer width-64 pre-norm GELU encoder with 4 heads, no dropout
(5 layers, post-norm, ReLU, 8 heads, dropout 0.1); cross-entropy averaged over the scored tokens
(summed over a sequence's output positions there, so its step grows with the output length); three
of the fifteen tasks; a classification answer read at the last input token (the paper appends one
blank step) and one extra blank step before a transduction answer; the memory models' read-out and
written vectors (see their modules); the stack and tape are sized to each batch's input length + 1
(``memory_per_input``: never full, where the paper's have a fixed 30 or 40 cells), so that training
on short inputs does not pay for the longest test input's memory (a stack that never overflows gives
the same outputs at any size; the tape is a ring, whose size decides where a move past its ends
lands).

Only tasks on which Table 2 agrees with the level rule for all five architectures can be chosen:
even pairs (the transformer solves it), solve equation, binary multiplication and compute sqrt
(nothing solves them) and bucket sort (the LSTM and transformer do, the memory models do not) are
exceptions the rule does not encode.

Issue #30 (Dec 3 2026): the judge is unchanged. The negative control trained no run of its own
(reverse string x LSTM, seed 0, is one of the smoke grid's runs): it now trains the full budget's
LSTM (hidden 64) there. The positive control re-judges a subset of the smoke grid's runs (reverse
string x stack RNN and LSTM); its configuration differs from the claim's, as a positive must.

Issue #31 (Dec 3 2026, after the full result was seen: 7/7 and 8/8 cells as expected, inconclusive
because five must-fail arms did not fit in 600 steps; test lengths 11-30 only 3x the training
length). Changed: steps 600 -> 2,500, test lengths 11-30 (3) -> 11-100 (6), learning rates {1e-3,
3e-3, 1e-2} -> {1e-3, 3e-3}, stack and tape memory per input, duplicate string -> missing duplicate
(both context-sensitive, only the tape RNN solves either in Table 2). A pilot that read only fit
(val per-token accuracy, seed 0, train <= 10) chose them: the transformer fits parity and reverse
only by 1,200-1,500 steps at lr 1e-3 (0.91-0.94; 0.76 at 3e-3) and missing duplicate by 2,000-2,500
(0.99, 1.00 at 1e-3; 0.83 at 1,500 steps at 3e-3); on duplicate string the tanh RNN stayed at
0.65-0.73 val per-token through 1,500 steps at lr 1e-3, 3e-3 and 1e-2 and hidden 64 or 256, while on
missing duplicate the RNN, stack and tape RNNs fit (0.98, 1.00, 0.97 by 1,500 steps at 3e-3).
Controls run at the full budget's protocol: the negative is the LSTM of the paper's size (hidden
256, runs of its own) on reverse string, the positive the stack RNN and LSTM on reverse string (the
claim's own runs, a different configuration); the smoke budget only checks the code runs.
"""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd
from pydantic import Field, model_validator

from genlab.claims import register
from genlab.claims.base import Case, Claim, ClaimResult, Control, Decision, Ref
from genlab.claims.guards import Fit, Floor, Verdict
from genlab.claims.measures import Final
from genlab.design import Design
from genlab.probes.length import OUT_OF_RANGE
from genlab.registry import Params
from genlab.report.claim_figures import LengthCurves
from genlab.tasks.formal_generators import FORMAL_TASKS

Arch = Literal["rnn", "stack_rnn", "tape_rnn", "transformer", "lstm"]
Level = Literal["R", "DCF", "CS"]
RuleTask = Literal[
    "modular_arithmetic",
    "parity_check",
    "cycle_navigation",
    "stack_manipulation",
    "reverse_string",
    "modular_arithmetic_brackets",
    "duplicate_string",
    "missing_duplicate",
    "odd_first",
    "binary_addition",
]
COLUMNS = {
    "rnn": "RNN",
    "stack_rnn": "Stack-RNN",
    "tape_rnn": "Tape-RNN",
    "transformer": "Transformer",
    "lstm": "LSTM",
}  # Table 2's column order
LEVEL_RULE: dict[str, list[str]] = {
    "R": ["rnn", "stack_rnn", "tape_rnn", "lstm"],
    "DCF": ["stack_rnn", "tape_rnn"],
    "CS": ["tape_rnn"],
}


class ChomskyConfig(Params):
    """Tasks, architectures, the expected pattern, lengths, sizes and the training budget."""

    tasks: list[RuleTask] = Field(
        default_factory=lambda: ["parity_check", "reverse_string", "missing_duplicate"]
    )
    archs: list[Arch] = Field(default_factory=lambda: list(COLUMNS))
    solvers: dict[Level, list[Arch]] = Field(
        default_factory=lambda: dict(LEVEL_RULE), description="who extrapolates, per level"
    )
    train_length: int = Field(10, ge=1)
    test_max: int = Field(100, ge=2)
    n_test_lengths: int = Field(6, ge=1)
    n_test: int = Field(64, ge=1, description="test examples per length")
    hidden: int = Field(64, ge=1, description="recurrent state size")
    d_model: int = Field(64, ge=4, description="encoder width (4 heads)")
    n_layers: int = Field(2, ge=1, description="encoder layers")
    steps: int = Field(2500, ge=1)
    batch_size: int = Field(32, ge=1)
    lrs: list[float] = Field(default_factory=lambda: [1e-3, 3e-3], min_length=1)
    seeds: int = Field(3, ge=1)

    @model_validator(mode="after")
    def _check(self) -> ChomskyConfig:
        if not self.tasks or not self.archs:
            raise ValueError("tasks and archs must not be empty")
        if self.test_max <= self.train_length:
            raise ValueError(
                f"test_max ({self.test_max}) must be above train_length "
                f"({self.train_length}): the claim is about extrapolation"
            )
        if any(lr <= 0 for lr in self.lrs):
            raise ValueError("lrs must all be > 0")
        return self


def model(arch: str, cfg: ChomskyConfig) -> dict[str, Any]:
    if arch == "transformer":
        return {
            "name": "transformer_encoder",
            "params": {
                "d_model": cfg.d_model,
                "n_heads": 4,
                "n_layers": cfg.n_layers,
                "positional": "sinusoidal",
            },
        }
    if arch in ("stack_rnn", "tape_rnn"):  # memory sized per input: see the module docstring
        return {"name": arch, "params": {"hidden": cfg.hidden, "memory_per_input": True}}
    return {"name": arch, "params": {"hidden": cfg.hidden}}


class Chomsky(Claim):
    """The Chomsky level of a task predicts which architecture extrapolates (#62)."""

    id = "length.chomsky"
    papers = (
        Ref(
            62,
            "Delétang, Ruoss, Grau-Moya, Genewein, Wenliang, Catt, Cundy, Hutter, "
            "Legg, Veness & Ortega 2023",
            "Neural networks and the Chomsky hierarchy",
        ),
    )
    statement = (
        "Trained on lengths <= train_length with fresh batches every step and scored as Table 2 "
        "scores a cell (per-token accuracy averaged over test lengths up to 10x the training "
        "length, max over seeds x learning rates; solved >= 0.9), every arm fitting its training "
        "lengths (val per-token >= 0.9): RNN and LSTM solve the regular tasks only, the stack RNN "
        "the regular and deterministic context-free ones, the tape RNN all three levels, the "
        "transformer none. Reproduced when >= 80% of the expected successes and >= 80% of the "
        "expected failures hold; not reproduced when either share is below 50%."
    )
    Config = ChomskyConfig
    scope = "paper"
    SOLVED, PASS, FAIL, FIT = 0.9, 0.8, 0.5, 0.9
    smoke_decides = False  # its controls run at the full budget's protocol
    budgets = {
        "smoke": {
            "tasks": ["parity_check", "reverse_string"],
            "archs": ["lstm", "stack_rnn"],
            "train_length": 5,
            "test_max": 40,
            "n_test_lengths": 2,
            "n_test": 32,
            "hidden": 32,
            "steps": 500,
            "lrs": [3e-3],
            "seeds": 2,
        },
        "full": {},
    }
    measures = {
        "score": Final(OUT_OF_RANGE, "token_accuracy"),
        "exact": Final(OUT_OF_RANGE, "accuracy"),
        "fit": Final("val/main", "token_accuracy"),
    }
    aggregate = "max"
    replicates = ("seed", "data_seed", "lr")
    fit = Fit("fit", FIT)
    floor = Floor("score", 0.55)  # every task here is binary (chance 0.5); see guards()
    figure = LengthCurves(panel="task", line="arch", metric="token_accuracy")
    controls = {
        "negative": Control(
            {
                "tasks": ["reverse_string"],
                "archs": ["lstm"],
                "hidden": 256,
                "solvers": {**LEVEL_RULE, "DCF": ["lstm"]},
            },
            "not reproduced",
            "Delétang et al.: an RNN without external memory does not "
            "extrapolate on deterministic context-free tasks, so 'the LSTM solves reverse string' "
            "must fail (it fits the training lengths, then falls short beyond them); the LSTM of "
            "the paper's size (hidden 256), so that it trains runs of its own, at the full "
            "budget's protocol",
            budget="full",
            heavy=True,
        ),
        "positive": Control(
            {"tasks": ["reverse_string"], "archs": ["stack_rnn", "lstm"]},
            "reproduced",
            "the stack RNN solves reverse string, the LSTM fits the training lengths only (the "
            "claim's own runs of those two cells, judged alone)",
            budget="full",
            heavy=True,
        ),
    }

    def guards(self, cfg: ChomskyConfig) -> list:
        chance = max(1 / FORMAL_TASKS[t].n_outputs(FORMAL_TASKS[t].alphabet[0]) for t in cfg.tasks)
        return [self.fit, Floor("score", chance + 0.05)]

    def arms(self, cfg: ChomskyConfig):
        task = {
            "task": "parity_check",
            "train_length": cfg.train_length,
            "test_max": cfg.test_max,
            "n_test_lengths": cfg.n_test_lengths,
            "n_train": 64,
            "n_val": 256,
            "n_test": cfg.n_test,
            "fresh": True,
        }
        base = {
            "task": {"name": "formal_language", "params": task},
            "model": model("rnn", cfg),
            "steps": cfg.steps,
            "batch_size": cfg.batch_size,
            "checkpoint_every": cfg.steps,
            "optimizer": {"name": "adam", "lr": cfg.lrs[0], "grad_clip": 1.0},
            "eval": {"every": cfg.steps, "log_points": 0, "probes": [{"name": "length_accuracy"}]},
        }
        return Design(
            base,
            axes={
                "task": {t: {"task.task": t} for t in cfg.tasks},
                "arch": {a: {"model": model(a, cfg)} for a in cfg.archs},
                "lr": {lr: {"optimizer.lr": lr} for lr in cfg.lrs},
            },
            seeds=cfg.seeds,
        ).expand()

    def synthetic(self, cfg: ChomskyConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: every cell the level rule (``solvers``) expects solved at 0.98, the others at
        0.7; null: every cell at 0.7 (nothing extrapolates); unfit: as effect, the first
        architecture not fitting (val per-token 0.5)."""
        level = FORMAL_TASKS[arm["task"]].level
        solved = case != "null" and arm["arch"] in cfg.solvers.get(level, [])
        fit = 0.5 if case == "unfit" and arm["arch"] == cfg.archs[0] else 0.99
        return {"score": 0.98 if solved else 0.7, "exact": 0.9 if solved else 0.0, "fit": fit}

    def cells(self, cfg: ChomskyConfig, table: pd.DataFrame) -> pd.DataFrame:
        """Per task x architecture: score, exact match, fit (max over seeds x lrs), level, the
        expected outcome and whether the cell is solved."""
        cells = self.summary(table)
        cells["level"] = cells["task"].map(lambda t: FORMAL_TASKS[t].level)
        cells["expected"] = [
            a in cfg.solvers.get(lv, [])
            for a, lv in zip(cells["arch"], cells["level"], strict=True)
        ]
        cells["solved"] = cells["score"] >= self.SOLVED
        runs = table.assign(ok=table["score"] >= self.SOLVED).groupby(["task", "arch"])["ok"]
        cells["runs_solved"] = [
            int(runs.sum().get((t, a), 0))
            for t, a in zip(cells["task"], cells["arch"], strict=True)
        ]
        return cells

    def decide(self, cfg: ChomskyConfig, table: pd.DataFrame) -> Decision:
        cells = self.cells(cfg, table)
        held = cells["solved"] == cells["expected"]
        pos, neg = held[cells["expected"]], held[~cells["expected"]]
        shares = [float(s.mean()) for s in (pos, neg) if len(s)]
        verdict: Verdict = (
            "not reproduced"
            if any(s < self.FAIL for s in shares)
            else "reproduced"
            if all(s >= self.PASS for s in shares)
            else "inconclusive"
        )
        n_runs = cfg.seeds * len(cfg.lrs)
        per_run = cells.loc[cells["expected"], "runs_solved"] / n_runs
        stats = {
            "expected_successes_held": pos.mean() if len(pos) else float("nan"),
            "expected_failures_held": neg.mean() if len(neg) else float("nan"),
            "cells": len(cells),
            "cells_as_expected": int(held.sum()),
            "expected_successes_runs_solving": per_run.mean() if len(per_run) else float("nan"),
        }
        sentence = (
            f"{int(pos.sum())}/{len(pos)} expected successes and {int(neg.sum())}/{len(neg)} "
            f"expected failures held (solved = per-token score >= {self.SOLVED}, max over "
            f"{cfg.seeds} seeds x {len(cfg.lrs)} lrs; lengths {cfg.train_length + 1}-"
            f"{cfg.test_max} after training on <= {cfg.train_length}, {cfg.steps} steps); "
            f"an expected success is solved by {per_run.mean() * n_runs:.1f} of {n_runs} runs "
            "on average."
        )
        return Decision(verdict, stats, sentence)

    def text(self, result: ClaimResult) -> str | None:
        """Table 2's layout: a row per task (with its level), a column per architecture, the
        score in % with the exact match in brackets; ``*`` solved, ``!`` not the expected."""
        cfg = self.Config.model_validate(result.config)
        if result.runs.empty:
            return None
        cells = self.cells(cfg, result.runs).set_index(["task", "arch"])
        archs = [a for a in COLUMNS if a in cfg.archs]
        lines = [f"{'Level':<6}{'Task':<29}" + "".join(f"{COLUMNS[a]:>16}" for a in archs)]
        for t in cfg.tasks:
            row = f"{FORMAL_TASKS[t].level:<6}{t.replace('_', ' ').title():<29}"
            for a in archs:
                c = cells.loc[(t, a)]
                mark = ("*" if c["solved"] else " ") + (
                    " " if c["solved"] == c["expected"] else "!"
                )
                row += f"{100 * c['score']:>9.1f} ({100 * c['exact']:>3.0f}){mark}"[-16:]
            lines.append(row)
        lines.append(
            f"score: per-token accuracy (%) over test lengths {cfg.train_length + 1}-"
            f"{cfg.test_max}, max over {cfg.seeds} seeds x {len(cfg.lrs)} lrs; (exact "
            "match %); * solved (>= 90), ! not as the level rule expects"
        )
        return "\n".join(lines)


register(Chomsky())
