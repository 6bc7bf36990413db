"""The 15 formal-language tasks of Delétang et al., "Neural Networks and the Chomsky Hierarchy"
(ICLR 2023, catalogue #62), with train lengths up to ``train_length`` and test lengths beyond.

Inputs are token sequences; the model writes its answer at scored positions (``TaskInfo.kind`` is
``sequence`` for every task so that padding never leaks into the answer):

- classification tasks (parity, even pairs, modular arithmetic, ...) score the last input token;
- transduction tasks (reverse, duplicate, binary addition, ...) append ``BLANK`` tokens after the
  input, one unscored step and then one per output symbol, scored there, as Delétang et al. feed
  empty tokens while the network writes its output (no teacher forcing). The unscored step gives
  a memory-augmented model one action (e.g. a jump back along its tape) before it must answer.

Training lengths are drawn uniformly from the task's lengths in ``[1, train_length]``. With
``fresh`` the model trains as in the paper: every step draws a new batch from a stream seeded by
``data_seed`` and the batch index, all of one length drawn uniformly (their curriculum), and the
fixed ``train`` sample serves only to evaluate. There is one
test split per length (``test/len_057``, meta ``{"length": 57}``) on a grid of ``n_test_lengths``
lengths in ``[test_min, test_max]``, all above the training range. The paper trains on lengths up to
40 and tests 41-500; the CPU presets use 10 and 11-40.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator
from torch import Tensor

from genlab.data import Split, TaskData, TaskInfo
from genlab.losses import IGNORE
from genlab.registry import Params
from genlab.tasks import TASKS
from genlab.tasks.formal_generators import FORMAL_TASKS, FormalTask
from genlab.tasks.seq_common import BLANK, FIRST_SYMBOL, PAD, TINY, length_grid, pack, split_name

FormalName = Literal[
    "even_pairs",
    "modular_arithmetic",
    "parity_check",
    "cycle_navigation",
    "stack_manipulation",
    "reverse_string",
    "modular_arithmetic_brackets",
    "solve_equation",
    "duplicate_string",
    "missing_duplicate",
    "odd_first",
    "binary_addition",
    "binary_multiplication",
    "compute_sqrt",
    "bucket_sort",
]


class FormalParams(Params):
    """Params of ``formal_language``."""

    task: FormalName = Field("parity_check", description="one of the 15 tasks of Delétang et al.")
    alphabet_size: int | None = Field(
        None, ge=1, description="alphabet size or modulus; default the paper's (2 or 5)"
    )
    train_length: int = Field(40, ge=1, le=10_000, description="longest training input")
    test_min: int | None = Field(None, ge=1, description="shortest test input; default train+1")
    test_max: int = Field(500, ge=2, le=10_000, description="longest test input")
    n_test_lengths: int = Field(8, ge=1, le=1000, description="test lengths on an even grid")
    n_train: int = Field(5000, ge=1, description="training examples")
    n_val: int = Field(500, ge=0, description="in-range validation examples")
    n_test: int = Field(200, ge=1, description="test examples per test length")
    fresh: bool = Field(
        False, description="fresh batches every step, one length each (the paper's regime)"
    )

    @model_validator(mode="after")
    def _check(self) -> FormalParams:
        spec = FORMAL_TASKS[self.task]
        default, fixed = spec.alphabet
        k = self.alphabet_size
        if fixed is not None and k is not None and k != fixed:
            raise ValueError(f"alphabet_size: task {self.task!r} needs exactly {fixed}, got {k}")
        if k is not None and k < spec.alphabet_min:
            raise ValueError(
                f"alphabet_size: task {self.task!r} needs at least {spec.alphabet_min} symbols, "
                f"got {k}"
            )
        if spec.valid_length(self.train_length) < spec.min_length:
            raise ValueError(
                f"train_length: task {self.task!r} has no inputs of length <= {self.train_length}"
            )
        lo = self.test_min if self.test_min is not None else self.train_length + 1
        if lo <= self.train_length:
            raise ValueError(
                f"test_min ({lo}) must be above train_length ({self.train_length}): "
                "test lengths probe extrapolation"
            )
        if self.test_max < lo:
            raise ValueError(f"test_max ({self.test_max}) must be >= test_min ({lo})")
        if not test_lengths(self):
            raise ValueError(
                f"test_min/test_max: task {self.task!r} has no length in [{lo}, {self.test_max}]"
            )
        return self


STREAM = 62  # mixed into the seed of the fresh-batch stream, apart from the fixed splits


def test_lengths(p: FormalParams) -> list[int]:
    """The task's valid lengths on the test grid, all above ``train_length``."""
    spec = FORMAL_TASKS[p.task]
    lo = p.test_min if p.test_min is not None else p.train_length + 1
    valid = {spec.valid_length(n) for n in length_grid(lo, p.test_max, p.n_test_lengths)}
    return sorted(n for n in valid if n > p.train_length and n >= spec.min_length)


def encode(spec: FormalTask, inp: list[int], out: list[int]) -> tuple[list[int], list[int]]:
    """Token row and target row of one example (see the module docstring)."""
    x = [t + FIRST_SYMBOL for t in inp]
    if spec.kind == "classification":
        return x, [IGNORE] * (len(x) - 1) + out
    return x + [BLANK] * (len(out) + 1), [IGNORE] * (len(x) + 1) + out


def make_split(
    spec: FormalTask, rng: np.random.Generator, lengths: np.ndarray, k: int, meta: dict
) -> Split:
    rows = [encode(spec, *spec.sample(rng, int(n), k)) for n in lengths]
    return pack([r[0] for r in rows], [r[1] for r in rows], meta)


@TASKS.register("formal_language", FormalParams, papers=(62,), family="length", tiny=TINY)
def formal_language(params: FormalParams, data_seed: int) -> TaskData:
    """One of the 15 Chomsky-hierarchy tasks of Delétang et al. (#62), train short, test long."""
    spec = FORMAL_TASKS[params.task]
    k = params.alphabet_size or spec.alphabet[0]
    rng = np.random.default_rng(data_seed)
    train_lengths = np.array(
        sorted(
            {
                spec.valid_length(n)
                for n in range(1, params.train_length + 1)
                if spec.valid_length(n) >= spec.min_length
            }
        )
    )
    meta = {"task": params.task, "level": spec.level}

    def draw(n: int) -> np.ndarray:
        return rng.choice(train_lengths, size=n)

    train = {"main": make_split(spec, rng, draw(params.n_train), k, meta)}
    if params.fresh:

        def stream(step: int, n: int) -> tuple[Tensor, Tensor]:
            r = np.random.default_rng([data_seed, STREAM, step])
            batch = make_split(spec, r, np.full(n, r.choice(train_lengths)), k, meta)
            return batch.x, batch.y

        train["main"].stream = stream
    val = {"main": make_split(spec, rng, draw(params.n_val), k, meta)} if params.n_val else {}
    test = {
        split_name(n): make_split(spec, rng, np.full(params.n_test, n), k, {**meta, "length": n})
        for n in test_lengths(params)
    }
    longest = max(s.x.shape[1] for s in [*train.values(), *test.values()])
    n_out = spec.n_outputs(k)
    info = TaskInfo(
        kind="sequence",
        n_outputs=n_out,
        vocab_size=FIRST_SYMBOL + spec.n_symbols(k),
        seq_len=train["main"].x.shape[1],
        chance=1.0 / n_out,
        extra={
            "max_length": longest,
            "train_length": params.train_length,
            "level": spec.level,
            "output": spec.kind,
            "first_symbol": FIRST_SYMBOL,
            "pad": PAD,
        },
    )
    return TaskData(train=train, val=val, test=test, info=info)
