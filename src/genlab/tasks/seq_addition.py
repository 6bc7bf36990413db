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

Two chain-of-thought formats put intermediate steps between ``=`` and the answer; every chain
token is scored, so the length accuracy (exact match of the whole target under teacher forcing)
is exact match of chain and answer together, which equals greedy decoding's:

- ``scratchpad`` (Nye et al.; Anil et al., #46): plain operands; one step per digit, least
  significant first, ``a_i b_i c_i c_{i+1} s_i SEP`` (operand digits, carry in, then the two
  digits of ``a_i + b_i + c_i``: carry out and sum digit); then ``ANS`` and the plain sum;
- ``turing`` (Hou et al., #87): plain operands; ``n`` tape states, tape ``k`` a copy of tape
  ``k - 1`` with the head marker moved one digit left in both operands, the carry replaced and
  one more sum digit written: ``a' + b' BAR c s_{k-1}..s_0 SEP``; then ``ANS`` and the plain sum
  (see ``seq_arith.turing_chain``). Chains grow as ``~2.5 n^2`` tokens.

The length of an example is ``n`` (digits per operand); one test split per ``n`` above
``train_length``. Tokens: ``PAD`` 0, ``BLANK`` 1, ``=`` 2, ``EOS`` 3, ``+`` 4, digits 5-14,
hints from 15; the chain formats use 15-18 for ``HEAD``, ``BAR``, ``SEP``, ``ANS`` instead
(``seq_arith``).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.losses import IGNORE
from genlab.tasks import TASKS
from genlab.tasks.seq_arith import (
    ANS,
    CHAIN_FORMATS,
    DIGIT,
    EOS,
    EQ,
    HINT,
    N_CHAIN_TOKENS,
    OP,
    SEP,
    next_token,
    plain,
    render,
    turing_chain,
)
from genlab.tasks.seq_common import TINY, LengthParams, length_splits, pack

PLUS = OP


class AdditionParams(LengthParams):
    """Params of ``seq_addition``."""

    format: Literal["plain", "reversed", "index_hints", "scratchpad", "turing"] = "reversed"
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
    if fmt in CHAIN_FORMATS:
        return chain_example(a, b, fmt)
    n = len(a)
    carry, s = 0, []
    for i in range(n):
        carry, d = divmod(a[i] + b[i] + carry, 10)
        s.append(d)
    s.append(carry)
    prompt = render(a, fmt, hint0) + [PLUS] + render(b, fmt, hint0) + [EQ]
    answer = render(s, fmt, hint0)
    x = prompt + answer
    y = [IGNORE] * (len(prompt) - 1) + answer + [EOS]
    return x, y


def chain_example(a: list[int], b: list[int], fmt: str) -> tuple[list[int], list[int]]:
    """``a + b`` with a scratchpad (#46) or a Turing program (#87) before the plain sum."""

    def step(i: int, carry: int) -> tuple[int, int]:
        c, d = divmod(a[i] + b[i] + carry, 10)
        return d, c

    prompt = plain(a) + [PLUS] + plain(b) + [EQ]
    if fmt == "turing":
        chain, s = turing_chain([a, b], step, (True, True))
    else:
        chain, carry, s = [], 0, []
        for i in range(len(a)):
            d, c = step(i, carry)
            chain += [DIGIT + a[i], DIGIT + b[i], DIGIT + carry, DIGIT + c, DIGIT + d, SEP]
            s.append(d)
            carry = c
        s.append(carry)
    return next_token(prompt, chain + [ANS] + plain(s))


def _split(p: AdditionParams, rng: np.random.Generator, lengths: np.ndarray, meta: dict) -> Split:
    pool = p.n_hints or 2 * (p.test_max + 1)
    rows = []
    for n in lengths:
        n = int(n)
        a, b = rng.integers(10, size=n).tolist(), rng.integers(10, size=n).tolist()
        rows.append(example(a, b, p.format, int(rng.integers(pool - n))))
    return pack([r[0] for r in rows], [r[1] for r in rows], meta)


@TASKS.register("seq_addition", AdditionParams, papers=(42, 37, 46, 87), family="length", tiny=TINY)
def seq_addition(params: AdditionParams, data_seed: int) -> TaskData:
    """n-digit addition: plain / reversed / index-hint (#42), scratchpad (#46), Turing (#87)."""
    rng = np.random.default_rng(data_seed)
    train, val, test = length_splits(
        params,
        rng,
        lambda lengths, meta: _split(params, rng, lengths, meta),
        {"format": params.format},
    )
    longest = max(s.x.shape[1] for s in [*train.values(), *test.values()])
    n_tokens = HINT + (params.n_hints or 2 * (params.test_max + 1))
    if params.format in CHAIN_FORMATS:  # no hints; HEAD, BAR, SEP, ANS instead
        n_tokens = N_CHAIN_TOKENS
    info = TaskInfo(
        kind="sequence",
        n_outputs=n_tokens,
        vocab_size=n_tokens,
        seq_len=train["main"].x.shape[1],
        chance=0.1,
        extra={"max_length": longest, "train_length": params.train_length, "first_symbol": DIGIT},
    )
    return TaskData(train=train, val=val, test=test, info=info)
