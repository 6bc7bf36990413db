"""Sorting with an auxiliary hint task mixed into training (Awasthi & Gupta, task hinting, #92).

The main task is sorting in the next-token format of ``seq_string``: ``SORT s SEP sorted(s)`` with
the answer and a final ``EOS`` scored. With ``hint`` on, the training split also holds as many
examples of a simpler related task, marked by a task-id token ``HINT`` (multi-task training in one
environment, so ERM pools the two in every batch):

- ``successor``: ``HINT s SEP x1 succ(x1) x2 succ(x2) ...`` -- each input element followed by the
  next larger element of the input (``EOS`` for the largest); only the successors are scored. The
  successor is the step a sorter repeats (the next output is the successor of the previous one).
- ``count_smaller``: ``HINT s SEP c1 c2 ...`` -- for each input element the number of smaller
  elements, written with the symbol tokens (the element's index in the sorted output).

Hint examples have training lengths only; test splits (one per length above ``train_length``)
hold sorting alone. Symbols are drawn without replacement so that successors are well defined,
which needs ``alphabet_size >= test_max``.

Token layout: ``PAD`` 0, ``BLANK`` 1 (unused), ``SEP`` 2, ``EOS`` 3, ``SORT`` 4, ``HINT`` 5,
symbols from 6.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.losses import IGNORE
from genlab.tasks import TASKS
from genlab.tasks.seq_common import TINY, LengthParams, length_grid, pack, split_name

SEP, EOS, SORT, HINT, FIRST = 2, 3, 4, 5, 6


class SeqSortHintParams(LengthParams):
    """Params of ``seq_sort_hint``."""

    hint: bool = Field(True, description="mix hint-task examples into training")
    hint_task: Literal["successor", "count_smaller"] = Field("successor")
    alphabet_size: int = Field(50, ge=2, le=10_000, description="distinct integers to sort")
    train_length: int = Field(10, ge=1, le=10_000, description="longest training input")
    test_max: int = Field(20, ge=2, le=10_000, description="longest test input")
    n_train: int = Field(5000, ge=1, description="sorting examples (hint examples: as many more)")

    @model_validator(mode="after")
    def _check(self) -> SeqSortHintParams:
        if self.alphabet_size < self.test_max:
            raise ValueError(
                f"alphabet_size ({self.alphabet_size}) must be >= test_max ({self.test_max}): "
                "symbols are drawn without replacement"
            )
        return self


def sort_example(s: list[int]) -> tuple[list[int], list[int]]:
    """``SORT s SEP sorted(s)`` with targets ``IGNORE.. sorted(s) EOS`` (next-token aligned)."""
    x = [FIRST + t for t in s]
    out = [FIRST + t for t in sorted(s)]
    return [SORT, *x, SEP, *out], [IGNORE] * (len(x) + 1) + out + [EOS]


def hint_example(s: list[int], task: str) -> tuple[list[int], list[int]]:
    """One hint-task example of ``s`` (see the module docstring), next-token aligned."""
    x = [FIRST + t for t in s]
    ranked = sorted(s)
    if task == "successor":
        succ = {a: FIRST + b for a, b in zip(ranked, ranked[1:], strict=False)}
        answer = [tok for t in s for tok in (FIRST + t, succ.get(t, EOS))]
        tokens = [HINT, *x, SEP, *answer]
        start = len(x) + 2  # index of the first answer token
        # the target at position i is token i + 1; only successors (odd answer slots) are scored
        targets = [
            tokens[i + 1] if i + 1 >= start and (i + 1 - start) % 2 == 1 else IGNORE
            for i in range(len(tokens) - 1)
        ]
        return tokens, [*targets, IGNORE]
    rank = {t: i for i, t in enumerate(ranked)}
    out = [FIRST + rank[t] for t in s]
    return [HINT, *x, SEP, *out], [IGNORE] * (len(x) + 1) + out + [EOS]


def _split(
    rng: np.random.Generator, p: SeqSortHintParams, lengths: np.ndarray, meta: dict, hint: bool
) -> Split:
    rows = []
    for n in lengths:
        s = rng.choice(p.alphabet_size, size=int(n), replace=False).tolist()
        rows.append(hint_example(s, p.hint_task) if hint else sort_example(s))
    return pack([r[0] for r in rows], [r[1] for r in rows], meta)


def _cat(a: Split, b: Split) -> Split:
    """Rows of ``a`` then ``b`` in one split (``b`` re-padded to ``a``'s width or vice versa)."""
    xs = [r[r != 0].tolist() for r in a.x] + [r[r != 0].tolist() for r in b.x]
    ys = [r.tolist() for r in a.y] + [r.tolist() for r in b.y]
    ys = [y[: len(x)] for x, y in zip(xs, ys, strict=True)]
    return pack(xs, ys, a.meta)


@TASKS.register(
    "seq_sort_hint",
    SeqSortHintParams,
    papers=(92,),
    family="length",
    tiny={**TINY, "alphabet_size": 10},
)
def seq_sort_hint(params: SeqSortHintParams, data_seed: int) -> TaskData:
    """Sorting, optionally with a hint task in training (Awasthi & Gupta, task hinting, #92)."""
    rng = np.random.default_rng(data_seed)
    lo = params.test_lo
    meta = {"op": "sort", "hint": params.hint, "hint_task": params.hint_task}

    def draw(n: int) -> np.ndarray:
        return rng.integers(1, params.train_length + 1, size=n)

    main = _split(rng, params, draw(params.n_train), meta, hint=False)
    if params.hint:  # drawn after the sorting data, so both arms share the same sorting examples
        main = _cat(main, _split(rng, params, draw(params.n_train), meta, hint=True))
    val = {"main": _split(rng, params, draw(params.n_val), meta, False)} if params.n_val else {}
    test_rng = np.random.default_rng([data_seed, 1])  # the same test sets with and without hints
    test = {
        split_name(n): _split(
            test_rng, params, np.full(params.n_test, n), {**meta, "length": n}, hint=False
        )
        for n in length_grid(lo, params.test_max, params.n_test_lengths)
    }
    longest = max(s.x.shape[1] for s in [main, *test.values()])
    n_tokens = FIRST + params.alphabet_size
    info = TaskInfo(
        kind="sequence",
        n_outputs=n_tokens,
        vocab_size=n_tokens,
        seq_len=main.x.shape[1],
        chance=1.0 / params.alphabet_size,
        extra={"max_length": longest, "train_length": params.train_length, "first_symbol": FIRST},
    )
    return TaskData(train={"main": main}, val=val, test=test, info=info)
