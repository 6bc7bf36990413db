"""The data contract between tasks and everything else: splits of tensors kept in memory."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import torch
from torch import Tensor

Stream = Callable[[int, int], tuple[Tensor, Tensor]]


@dataclass
class Split:
    """One named piece of data: inputs ``x``, targets ``y`` and what it stands for in ``meta``.

    A training split may also carry a ``stream``: ``stream(k, n)`` returns the ``k``-th batch of
    ``n`` fresh examples, a pure function of ``k`` (and the task's data seed), so that training
    draws new data every step (Delétang et al., #62) and a resumed run draws the same batches;
    ``x``/``y`` then hold a fixed sample of the same distribution, for evaluation."""

    x: Tensor
    y: Tensor
    meta: dict[str, Any] = field(default_factory=dict)
    stream: Stream | None = None

    def __post_init__(self) -> None:
        if len(self.x) != len(self.y):
            raise ValueError(f"split has {len(self.x)} inputs but {len(self.y)} targets")

    def __len__(self) -> int:
        return len(self.x)


@dataclass(frozen=True)
class TaskInfo:
    """What a model builder needs to know about a task.

    ``kind`` is ``classification`` (one label per input) or ``sequence`` (a label per position,
    ``-100`` where there is nothing to predict). Token inputs give ``vocab_size`` and ``seq_len``;
    dense inputs give ``input_shape``.
    """

    kind: Literal["classification", "sequence", "regression"]
    n_outputs: int
    input_shape: tuple[int, ...] = ()
    vocab_size: int | None = None
    seq_len: int | None = None
    chance: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class TaskData:
    """Training environments, in-distribution validation, and shifted test splits."""

    train: dict[str, Split]
    val: dict[str, Split]
    test: dict[str, Split]
    info: TaskInfo

    def splits(self) -> dict[str, Split]:
        """Every split under its store label ``role/name`` (``train/main``, ``test/heldout``)."""
        out: dict[str, Split] = {}
        for role in ("train", "val", "test"):
            for name, split in getattr(self, role).items():
                out[f"{role}/{name}"] = split
        return out

    def to(self, dtype: torch.dtype) -> TaskData:
        """Float inputs cast to ``dtype`` (token inputs stay integer)."""

        def cast(s: Split) -> Split:
            x = s.x.to(dtype) if s.x.is_floating_point() else s.x
            if s.stream is None:
                return replace(s, x=x)
            inner = s.stream

            def stream(k: int, n: int) -> tuple[Tensor, Tensor]:
                bx, by = inner(k, n)
                return (bx.to(dtype) if bx.is_floating_point() else bx), by

            return replace(s, x=x, stream=stream)

        return TaskData(
            {k: cast(v) for k, v in self.train.items()},
            {k: cast(v) for k, v in self.val.items()},
            {k: cast(v) for k, v in self.test.items()},
            self.info,
        )
