"""Parity of a bit string, answered directly or after a scratchpad (Anil et al. 2022, catalogue #46).

Next-token prediction with teacher forcing, as in ``seq_string``: the bits, a separator, then the
scored target. Formats:

- ``direct``: ``b1 .. bn SEP = a EOS``; only ``a`` (the parity) and ``EOS`` are scored;
- ``scratchpad``: ``b1 .. bn SEP b1 c1 b2 c2 .. bn cn = a EOS``, where ``ci`` is the parity of
  ``b1 .. bi``: each step copies the next bit and updates the running parity (the solution steps
  of Anil et al., written out before the answer); every step, the answer and ``EOS`` are scored.

Per-sequence accuracy is the exact match of the whole scored target, so with a scratchpad it is a
lower bound on the accuracy of the final answer under greedy decoding (a wrong step counts as a
miss even if the answer is right). The length of an example is ``n``; one test split per length
above ``train_length``. Tokens: ``PAD`` 0, ``BLANK`` 1, ``SEP`` 2, ``EOS`` 3, ``=`` 4, bits 5-6.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from genlab.data import Split, TaskData, TaskInfo
from genlab.losses import IGNORE
from genlab.tasks import TASKS
from genlab.tasks.seq_common import TINY, LengthParams, length_splits, pack

SEP, EOS, EQ, BIT = 2, 3, 4, 5


class ParityParams(LengthParams):
    """Params of ``seq_parity``."""

    format: Literal["direct", "scratchpad"] = Field("direct", description="answer form")
    train_length: int = Field(8, ge=1, le=1000, description="most bits in training")
    test_max: int = Field(16, ge=2, le=1000)


def example(bits: list[int], fmt: str) -> tuple[list[int], list[int]]:
    """Tokens and next-token targets for one bit string."""
    steps: list[int] = []
    parity = 0
    for b in bits:
        parity ^= b
        steps += [BIT + b, BIT + parity]
    answer = (steps if fmt == "scratchpad" else []) + [EQ, BIT + parity]
    prompt = [BIT + b for b in bits] + [SEP]
    x = prompt + answer
    scored = answer if fmt == "scratchpad" else answer[1:]  # ``=`` is given when direct
    return x, [IGNORE] * (len(x) - len(scored) - 1) + scored + [EOS]


def _split(p: ParityParams, rng: np.random.Generator, lengths: np.ndarray, meta: dict) -> Split:
    rows = [example(rng.integers(2, size=int(n)).tolist(), p.format) for n in lengths]
    return pack([r[0] for r in rows], [r[1] for r in rows], meta)


@TASKS.register("seq_parity", ParityParams, papers=(46,), family="length", tiny=TINY)
def seq_parity(params: ParityParams, data_seed: int) -> TaskData:
    """Parity of a bit string, direct or with a scratchpad of running parities (Anil et al., #46)."""
    rng = np.random.default_rng(data_seed)
    train, val, test = length_splits(
        params,
        rng,
        lambda lengths, meta: _split(params, rng, lengths, meta),
        {"format": params.format},
    )
    longest = max(s.x.shape[1] for s in [*train.values(), *test.values()])
    info = TaskInfo(
        kind="sequence",
        n_outputs=BIT + 2,
        vocab_size=BIT + 2,
        seq_len=train["main"].x.shape[1],
        chance=0.5,
        extra={"max_length": longest, "train_length": params.train_length, "first_symbol": BIT},
    )
    return TaskData(train=train, val=val, test=test, info=info)
