"""Multi-digit addition in three formats, for length generalization (Zhou et al., #42 and #37).

Two ``n``-digit operands (leading zeros allowed) and their ``n + 1``-digit sum, as next-token
prediction: ``a + b = s EOS`` with the sum scored (teacher forcing; exact match equals greedy
decoding's). Formats:

- ``plain``: most significant digit first everywhere;
- ``reversed``: least significant digit first everywhere, so each sum digit depends on operand
  digits already seen at the same index (the format with a short RASP-L program, #37);
- ``index_hints``: reversed, and every digit is preceded by a hint token naming its index, shared
  by the operands and the sum (Zhou et al., #42). Each example uses a random run of consecutive
  hints from a pool of ``n_hints``, so every hint is seen in training at every index.

The length of an example is ``n`` (digits per operand); one test split per ``n`` above
``train_length``. Tokens: ``PAD`` 0, ``BLANK`` 1, ``=`` 2, ``EOS`` 3, ``+`` 4, digits 5-14,
hints from 15.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from genlab.losses import IGNORE
from genlab.tasks import TASKS
from genlab.tasks.base import Split, TaskData, TaskInfo
from genlab.tasks.seq_common import LengthParams, length_splits, pack

EQ, EOS, PLUS, DIGIT, HINT = 2, 3, 4, 5, 15


class AdditionParams(LengthParams):
    """Params of ``seq_addition``."""

    format: Literal["plain", "reversed", "index_hints"] = "reversed"
    train_length: int = Field(8, ge=1, le=1000, description="most digits per operand in training")
    test_min: int | None = Field(None, ge=1, description="fewest test digits; default train+1")
    test_max: int = Field(16, ge=2, le=1000)
    n_hints: int | None = Field(None, ge=2, description="hint pool; default 2 * (test_max + 1)")
    n_train: int = Field(10000, ge=1)

    @model_validator(mode="after")
    def _check(self) -> AdditionParams:
        if self.n_hints is not None and self.n_hints < self.test_max + 1:
            raise ValueError(
                f"n_hints ({self.n_hints}) must be >= test_max + 1 ({self.test_max + 1}): "
                "every sum digit needs its own hint"
            )
        return self


def example(a: list[int], b: list[int], fmt: str, hint0: int = 0) -> tuple[list[int], list[int]]:
    """Tokens and next-token targets of ``a + b`` (digit lists, least significant first)."""
    n = len(a)
    carry, s = 0, []
    for i in range(n):
        carry, d = divmod(a[i] + b[i] + carry, 10)
        s.append(d)
    s.append(carry)

    def render(digits: list[int]) -> list[int]:
        if fmt == "plain":
            return [DIGIT + d for d in digits[::-1]]
        if fmt == "reversed":
            return [DIGIT + d for d in digits]
        return [t for i, d in enumerate(digits) for t in (HINT + hint0 + i, DIGIT + d)]

    prompt = render(a) + [PLUS] + render(b) + [EQ]
    answer = render(s)
    x = prompt + answer
    y = [IGNORE] * (len(prompt) - 1) + answer + [EOS]
    return x, y


def _split(p: AdditionParams, rng: np.random.Generator, lengths: np.ndarray, meta: dict) -> Split:
    pool = p.n_hints or 2 * (p.test_max + 1)
    rows = []
    for n in lengths:
        n = int(n)
        a, b = rng.integers(10, size=n).tolist(), rng.integers(10, size=n).tolist()
        rows.append(example(a, b, p.format, int(rng.integers(pool - n))))
    return pack([r[0] for r in rows], [r[1] for r in rows], meta)


@TASKS.register("seq_addition", AdditionParams, papers=(42, 37), family="length")
def seq_addition(params: AdditionParams, data_seed: int) -> TaskData:
    """n-digit addition, plain / reversed / index-hint formats (Zhou et al., #42)."""
    rng = np.random.default_rng(data_seed)
    train, val, test = length_splits(
        params,
        rng,
        lambda lengths, meta: _split(params, rng, lengths, meta),
        {"format": params.format},
    )
    longest = max(s.x.shape[1] for s in [*train.values(), *test.values()])
    n_tokens = HINT + (params.n_hints or 2 * (params.test_max + 1))
    info = TaskInfo(
        kind="sequence",
        n_outputs=n_tokens,
        vocab_size=n_tokens,
        seq_len=train["main"].x.shape[1],
        chance=0.1,
        extra={"max_length": longest, "train_length": params.train_length, "first_symbol": DIGIT},
    )
    return TaskData(train=train, val=val, test=test, info=info)
