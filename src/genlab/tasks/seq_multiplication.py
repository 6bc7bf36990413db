"""n-digit by m-digit multiplication in five formats, for length generalization.

An ``n``-digit operand ``a`` times an ``m``-digit operand ``b`` (``m`` uniform in
``multiplier_min..multiplier_max``, leading zeros allowed in both) and their ``n + m``-digit
product, as next-token prediction ``a * b = p EOS`` with everything after ``=`` scored (teacher
forcing; exact match of the whole target equals greedy decoding's). The length of an example is
``n``; one test split per ``n`` above ``train_length``. Formats, as in ``seq_addition``:

- ``plain``: most significant digit first everywhere;
- ``reversed``: least significant digit first everywhere;
- ``index_hints``: reversed, each digit preceded by the hint of its index, shared by ``a``, ``b``
  and the product, from a random run of a pool of ``n_hints`` (Zhou et al., #42);
- ``scratchpad`` (Nye et al.; Anil et al., #46): reversed operands; per multiplier digit ``b_j``
  the partial product ``a * b_j * 10^j`` as ``n + m`` (digit, carry) pairs, least significant
  first (the carry is the one ``a_i * b_j + carry`` leaves for the next digit), ``SEP``, the
  running sum of the partial products so far as ``n + m`` reversed digits, ``SEP``; then ``ANS``
  and the reversed product (equal to the last running sum);
- ``turing`` (Hou et al., #87), for ``multiplier_max = 1`` only: plain operands; ``n`` tape states,
  tape ``k`` a copy of tape ``k - 1`` with the head marker moved one digit left in ``a``, the carry
  (0-8) replaced and one product digit written (``seq_arith.turing_chain``); then ``ANS`` and the
  plain product.

Tokens (``seq_arith``): ``PAD`` 0, ``BLANK`` 1, ``=`` 2, ``EOS`` 3, ``*`` 4, digits 5-14, hints
from 15, or ``HEAD``/``BAR``/``SEP``/``ANS`` 15-18 in the chain formats.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.tasks import TASKS
from genlab.tasks.seq_arith import (
    ANS,
    CHAIN_FORMATS,
    DIGIT,
    EQ,
    HINT,
    N_CHAIN_TOKENS,
    OP,
    SEP,
    digits_of,
    next_token,
    plain,
    render,
    turing_chain,
    value_of,
)
from genlab.tasks.seq_common import TINY, LengthParams, length_splits, pack

TIMES = OP


class MultiplicationParams(LengthParams):
    """Params of ``seq_multiplication``."""

    format: Literal["plain", "reversed", "index_hints", "scratchpad", "turing"] = "reversed"
    train_length: int = Field(6, ge=1, le=1000, description="most digits of a in training")
    test_min: int | None = Field(None, ge=1, description="fewest test digits; default train+1")
    test_max: int = Field(12, ge=2, le=1000)
    multiplier_min: int = Field(1, ge=1, le=50, description="fewest digits of b")
    multiplier_max: int = Field(1, ge=1, le=50, description="most digits of b")
    n_hints: int | None = Field(
        None, ge=2, description="hint pool; default 2 * (test_max + multiplier_max)"
    )
    n_train: int = Field(10000, ge=1)

    @property
    def hint_pool(self) -> int:
        return self.n_hints or 2 * (self.test_max + self.multiplier_max)

    @model_validator(mode="after")
    def _check(self) -> MultiplicationParams:
        if self.multiplier_min > self.multiplier_max:
            raise ValueError(
                f"multiplier_min ({self.multiplier_min}) must be <= multiplier_max "
                f"({self.multiplier_max})"
            )
        need = self.test_max + self.multiplier_max
        if self.n_hints is not None and self.n_hints < need:
            raise ValueError(
                f"n_hints ({self.n_hints}) must be >= test_max + multiplier_max ({need}): "
                "every product digit needs its own hint"
            )
        if self.format == "turing" and self.multiplier_max != 1:
            raise ValueError(
                "format 'turing' needs multiplier_max = 1 (n-digit by 1-digit); "
                f"got multiplier_max = {self.multiplier_max}"
            )
        return self


def example(a: list[int], b: list[int], fmt: str, hint0: int = 0) -> tuple[list[int], list[int]]:
    """Tokens and next-token targets of ``a * b`` (digit lists, least significant first)."""
    width = len(a) + len(b)
    p = digits_of(value_of(a) * value_of(b), width)
    if fmt == "scratchpad":
        return next_token(
            render(a, "reversed") + [TIMES] + render(b, "reversed") + [EQ],
            scratchpad(a, b) + [ANS] + render(p, "reversed"),
        )
    if fmt == "turing":
        if len(b) != 1:
            raise ValueError("the turing format multiplies by one digit")

        def step(i: int, carry: int) -> tuple[int, int]:
            c, d = divmod(a[i] * b[0] + carry, 10)
            return d, c

        chain, out = turing_chain([a, b], step, (True, False))
        return next_token(plain(a) + [TIMES] + plain(b) + [EQ], chain + [ANS] + plain(out))
    prompt = render(a, fmt, hint0) + [TIMES] + render(b, fmt, hint0) + [EQ]
    return next_token(prompt, render(p, fmt, hint0))


def scratchpad(a: list[int], b: list[int]) -> list[int]:
    """Partial products with their carries and running sums (see the module docstring)."""
    width, toks, total = len(a) + len(b), [], 0
    for j, bj in enumerate(b):
        carry, pairs = 0, []
        for i in range(width - j):
            carry, d = divmod((a[i] * bj if i < len(a) else 0) + carry, 10)
            pairs.append((d, carry))
        pairs = [(0, 0)] * j + pairs  # the shift by 10^j
        toks += [DIGIT + t for pair in pairs for t in pair] + [SEP]
        total += value_of(a) * bj * 10**j
        toks += render(digits_of(total, width), "reversed") + [SEP]
    return toks


def _split(
    p: MultiplicationParams, rng: np.random.Generator, lengths: np.ndarray, meta: dict
) -> Split:
    rows = []
    for n in lengths:
        n = int(n)
        m = int(rng.integers(p.multiplier_min, p.multiplier_max + 1))
        a, b = rng.integers(10, size=n).tolist(), rng.integers(10, size=m).tolist()
        rows.append(example(a, b, p.format, int(rng.integers(p.hint_pool - (n + m) + 1))))
    return pack([r[0] for r in rows], [r[1] for r in rows], meta)


@TASKS.register(
    "seq_multiplication",
    MultiplicationParams,
    papers=(42, 46, 87),
    family="length",
    tiny=TINY,
)
def seq_multiplication(params: MultiplicationParams, data_seed: int) -> TaskData:
    """n-digit x m-digit multiplication: plain / reversed / index hints / scratchpad / Turing."""
    rng = np.random.default_rng(data_seed)
    train, val, test = length_splits(
        params,
        rng,
        lambda lengths, meta: _split(params, rng, lengths, meta),
        {"format": params.format},
    )
    longest = max(s.x.shape[1] for s in [*train.values(), *val.values(), *test.values()])
    chain = params.format in CHAIN_FORMATS
    n_tokens = N_CHAIN_TOKENS if chain else HINT + params.hint_pool
    info = TaskInfo(
        kind="sequence",
        n_outputs=n_tokens,
        vocab_size=n_tokens,
        seq_len=train["main"].x.shape[1],
        chance=0.1,
        extra={"max_length": longest, "train_length": params.train_length, "first_symbol": DIGIT},
    )
    return TaskData(train=train, val=val, test=test, info=info)
