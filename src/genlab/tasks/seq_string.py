"""Copy, reverse and sort as next-token prediction, for decoder-only transformers.

The format of Kazemnejad et al. (NoPE, #100) and Zhou et al. (RASP-L, #37): the input, a separator,
then the answer, trained with teacher forcing; the answer positions and a final end token are
scored. Teacher-forced exact match equals greedy-decoding exact match (if every next token is
right, greedy decoding reproduces the target), so per-sequence accuracy here is the papers'
exact-match metric. One test split per input length above ``train_length`` (``test/len_012``).

Token layout: ``PAD`` 0, ``BLANK`` 1 (unused), ``SEP`` 2, ``EOS`` 3, symbols from 4. With
``unique`` the input symbols are drawn without replacement (copy with unique tokens has a short
RASP-L program, copy with repeats does not, #37), which needs ``alphabet_size >= test_max``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from genlab.losses import IGNORE
from genlab.registry import Params
from genlab.tasks import TASKS
from genlab.tasks.base import Split, TaskData, TaskInfo
from genlab.tasks.seq_common import length_grid, pack, split_name

SEP, EOS, FIRST = 2, 3, 4
OPS = {
    "copy": lambda s: list(s),
    "reverse": lambda s: list(s[::-1]),
    "sort": lambda s: sorted(s),
}


class SeqStringParams(Params):
    """Params of ``seq_string``."""

    op: Literal["copy", "reverse", "sort"] = Field("copy", description="what to output")
    alphabet_size: int = Field(10, ge=1, le=10_000, description="number of distinct symbols")
    unique: bool = Field(False, description="draw input symbols without replacement")
    train_length: int = Field(16, ge=1, le=10_000, description="longest training input")
    test_min: int | None = Field(None, ge=1, description="shortest test input; default train+1")
    test_max: int = Field(32, ge=2, le=10_000, description="longest test input")
    n_test_lengths: int = Field(4, ge=1, le=1000)
    n_train: int = Field(5000, ge=1)
    n_val: int = Field(500, ge=0)
    n_test: int = Field(200, ge=1, description="test examples per length")

    @model_validator(mode="after")
    def _check(self) -> SeqStringParams:
        lo = self.test_min if self.test_min is not None else self.train_length + 1
        if lo <= self.train_length:
            raise ValueError(
                f"test_min ({lo}) must be above train_length ({self.train_length}): "
                "test lengths probe extrapolation"
            )
        if self.test_max < lo:
            raise ValueError(f"test_max ({self.test_max}) must be >= test_min ({lo})")
        if self.alphabet_size < 2:
            raise ValueError(f"alphabet_size: {self.op} needs at least 2 symbols")
        if self.unique and self.alphabet_size < self.test_max:
            raise ValueError(
                f"alphabet_size ({self.alphabet_size}) must be >= test_max ({self.test_max}) "
                "to draw unique symbols"
            )
        return self


def example(s: list[int], op: str) -> tuple[list[int], list[int]]:
    """Tokens ``s SEP answer`` and targets ``IGNORE.. answer EOS`` (next-token aligned)."""
    x = [FIRST + t for t in s]
    out = [FIRST + t for t in OPS[op](s)]
    return x + [SEP] + out, [IGNORE] * len(x) + out + [EOS]


def _split(p: SeqStringParams, rng: np.random.Generator, lengths: np.ndarray, meta: dict) -> Split:
    rows = []
    for n in lengths:
        s = rng.choice(p.alphabet_size, size=int(n), replace=not p.unique).tolist()
        rows.append(example(s, p.op))
    return pack([r[0] for r in rows], [r[1] for r in rows], meta)


@TASKS.register("seq_string", SeqStringParams, papers=(100, 37), family="length")
def seq_string(params: SeqStringParams, data_seed: int) -> TaskData:
    """Copy / reverse / sort a random string, next-token format (Kazemnejad et al., #100)."""
    rng = np.random.default_rng(data_seed)
    lo = params.test_min if params.test_min is not None else params.train_length + 1
    meta = {"op": params.op}

    def draw(n: int) -> np.ndarray:
        return rng.integers(1, params.train_length + 1, size=n)

    train = {"main": _split(params, rng, draw(params.n_train), meta)}
    val = {"main": _split(params, rng, draw(params.n_val), meta)} if params.n_val else {}
    test = {
        split_name(n): _split(params, rng, np.full(params.n_test, n), {**meta, "length": n})
        for n in length_grid(lo, params.test_max, params.n_test_lengths)
    }
    longest = max(s.x.shape[1] for s in [*train.values(), *test.values()])
    n_tokens = FIRST + params.alphabet_size
    info = TaskInfo(
        kind="sequence",
        n_outputs=n_tokens,
        vocab_size=n_tokens,
        seq_len=train["main"].x.shape[1],
        chance=1.0 / params.alphabet_size,
        extra={"max_length": longest, "train_length": params.train_length, "first_symbol": FIRST},
    )
    return TaskData(train=train, val=val, test=test, info=info)
