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

from genlab.data import Split, TaskData, TaskInfo
from genlab.losses import IGNORE
from genlab.tasks import TASKS
from genlab.tasks.seq_common import TINY, LengthParams, length_splits, pack

SEP, EOS, FIRST = 2, 3, 4
OPS = {
    "copy": lambda s: list(s),
    "reverse": lambda s: list(s[::-1]),
    "sort": lambda s: sorted(s),
}


class SeqStringParams(LengthParams):
    """Params of ``seq_string``."""

    op: Literal["copy", "reverse", "sort"] = Field("copy", description="what to output")
    alphabet_size: int = Field(10, ge=1, le=10_000, description="number of distinct symbols")
    unique: bool = Field(False, description="draw input symbols without replacement")

    @model_validator(mode="after")
    def _check(self) -> SeqStringParams:
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


@TASKS.register("seq_string", SeqStringParams, papers=(100, 37), family="length", tiny=TINY)
def seq_string(params: SeqStringParams, data_seed: int) -> TaskData:
    """Copy / reverse / sort a random string, next-token format (Kazemnejad et al., #100)."""
    rng = np.random.default_rng(data_seed)
    train, val, test = length_splits(
        params, rng, lambda lengths, meta: _split(params, rng, lengths, meta), {"op": params.op}
    )
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
