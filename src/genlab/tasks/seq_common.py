"""Shared helpers of the length-generalization tasks: token layout, padding, length grids.

Every length task reserves token ``PAD`` (0, right padding, never scored) and ``BLANK`` (1, a slot
where the model must write an output) and numbers its own symbols from ``FIRST_SYMBOL``. Targets are
``genlab.losses.IGNORE`` wherever nothing is scored, so padded positions cost nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from genlab.losses import IGNORE
from genlab.tasks.base import Split

PAD, BLANK, FIRST_SYMBOL = 0, 1, 2


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
