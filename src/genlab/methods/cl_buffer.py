"""A bounded, experience-balanced memory filled by reservoir sampling over the stream.

As Avalanche's ``ExperienceBalancedBuffer`` (used by its ``Replay`` strategy): with ``k`` experiences
seen, each holds ``size // k`` examples; experience ``k``'s share is drawn by reservoir sampling
(Vitter's algorithm R) from the batches the method sees, so the memory never exceeds ``size`` and
never reads data outside the stream. Used by replay and Model Zoo (#120).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor


class ExperienceBuffer:
    """Per-experience tensors ``x``, ``y``; ``seen`` counts the current experience's stream."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.x: list[Tensor] = []
        self.y: list[Tensor] = []
        self.seen = 0

    def __len__(self) -> int:
        return sum(len(y) for y in self.y)

    def start(self, k: int) -> None:
        """Make room for experience ``k``: every earlier one keeps ``size // (k + 1)`` examples."""
        quota = self.size // (k + 1)
        self.x, self.y = [x[:quota] for x in self.x], [y[:quota] for y in self.y]
        self.seen = 0

    def add(self, x: Tensor, y: Tensor, k: int) -> None:
        """Reservoir-sample the batch into experience ``k``'s share (``k`` = the last started)."""
        quota = self.size // (k + 1)
        if len(self.y) <= k:
            self.x.append(x[:0].clone())
            self.y.append(y[:0].clone())
        free = max(0, min(quota - len(self.y[k]), len(y)))
        self.x[k] = torch.cat([self.x[k], x[:free]])
        self.y[k] = torch.cat([self.y[k], y[:free]])
        self.seen += free
        for i in range(free, len(y)):
            self.seen += 1
            j = int(torch.randint(self.seen, ()))
            if j < quota:
                self.x[k][j], self.y[k][j] = x[i], y[i]

    def sample(self, n: int, exps: list[int] | None = None) -> tuple[Tensor, Tensor, Tensor]:
        """``n`` examples drawn uniformly from the stored ones (of ``exps`` only, when given), with
        the experience of each."""
        keep = [k for k in range(len(self.y)) if (exps is None or k in exps) and len(self.y[k])]
        xs = torch.cat([self.x[k] for k in keep])
        ys = torch.cat([self.y[k] for k in keep])
        es = torch.cat([torch.full((len(self.y[k]),), k) for k in keep])
        idx = torch.randint(len(ys), (n,))
        return xs[idx], ys[idx], es[idx]

    def state_dict(self) -> dict[str, Any]:
        return {"x": list(self.x), "y": list(self.y), "seen": self.seen}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.x, self.y, self.seen = list(state["x"]), list(state["y"]), state["seen"]
