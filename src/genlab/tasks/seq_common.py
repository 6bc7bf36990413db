"""Shared helpers of the length-generalization tasks: token layout, padding, length grids.

Every length task reserves token ``PAD`` (0, right padding, never scored) and ``BLANK`` (1, a slot
where the model must write an output) and numbers its own symbols from ``FIRST_SYMBOL``. Targets are
``genlab.losses.IGNORE`` wherever nothing is scored, so padded positions cost nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from pydantic import Field, model_validator

from genlab.data import Split
from genlab.losses import IGNORE
from genlab.registry import Params

PAD, BLANK, FIRST_SYMBOL = 0, 1, 2
# the tiny configuration of a length task (``genlab.conformance``): lengths 1..3, tested at 5
TINY = {
    "train_length": 3,
    "test_max": 5,
    "n_test_lengths": 1,
    "n_train": 64,
    "n_val": 16,
    "n_test": 16,
}


def pack(rows_x: Sequence[Sequence[int]], rows_y: Sequence[Sequence[int]], meta: dict) -> Split:
    """Right-pad token rows with ``PAD`` and target rows with ``IGNORE`` into one ``Split``."""
    width = max(len(r) for r in rows_x)
    x = torch.full((len(rows_x), width), PAD, dtype=torch.long)
    y = torch.full((len(rows_x), width), IGNORE, dtype=torch.long)
    for i, (rx, ry) in enumerate(zip(rows_x, rows_y, strict=True)):
        x[i, : len(rx)] = torch.tensor(rx, dtype=torch.long)
        y[i, : len(ry)] = torch.tensor(ry, dtype=torch.long)
    return Split(x, y, meta)


def length_grid(lo: int, hi: int, n: int) -> list[int]:
    """``n`` lengths spread evenly over ``[lo, hi]`` (both ends included, duplicates dropped)."""
    if n <= 1 or hi == lo:
        return [hi]
    return sorted({round(lo + i * (hi - lo) / (n - 1)) for i in range(n)})


def split_name(length: int) -> str:
    """The test split name of one length, zero-padded so that names sort by length."""
    return f"len_{length:03d}"


class LengthParams(Params):
    """Lengths every length task shares: train on 1..``train_length``, test on ``n_test_lengths``
    lengths in ``test_min..test_max`` (``test_min`` defaults to ``train_length + 1``)."""

    train_length: int = Field(16, ge=1, le=10_000, description="longest training input")
    test_min: int | None = Field(None, ge=1, description="shortest test input; default train+1")
    test_max: int = Field(32, ge=2, le=10_000, description="longest test input")
    n_test_lengths: int = Field(4, ge=1, le=1000)
    n_train: int = Field(5000, ge=1)
    n_val: int = Field(500, ge=0)
    n_test: int = Field(200, ge=1, description="test examples per length")

    @property
    def test_lo(self) -> int:
        return self.test_min if self.test_min is not None else self.train_length + 1

    @model_validator(mode="after")
    def _extrapolates(self) -> LengthParams:
        if self.test_lo <= self.train_length:
            raise ValueError(
                f"test_min ({self.test_lo}) must be above train_length ({self.train_length}): "
                "test lengths probe extrapolation"
            )
        if self.test_max < self.test_lo:
            raise ValueError(f"test_max ({self.test_max}) must be >= test_min ({self.test_lo})")
        return self


def length_splits(
    p: LengthParams,
    rng: np.random.Generator,
    make: Callable[[np.ndarray, dict], Split],
    meta: dict,
) -> tuple[dict[str, Split], dict[str, Split], dict[str, Split]]:
    """train/val (lengths uniform in 1..train_length) and one test split per test length, each
    built by ``make(lengths, meta)``; draws from ``rng`` in that order."""

    def draw(n: int) -> np.ndarray:
        return rng.integers(1, p.train_length + 1, size=n)

    train = {"main": make(draw(p.n_train), meta)}
    val = {"main": make(draw(p.n_val), meta)} if p.n_val else {}
    test = {
        split_name(n): make(np.full(p.n_test, n), {**meta, "length": n})
        for n in length_grid(p.test_lo, p.test_max, p.n_test_lengths)
    }
    return train, val, test
