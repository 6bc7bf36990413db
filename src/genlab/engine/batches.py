"""Minibatches indexed from in-memory splits, one per training environment, seeded order."""

from __future__ import annotations

import torch

from genlab.methods.base import Batch
from genlab.tasks.base import Split


class BatchSampler:
    """Draws a batch per environment each step: epochs of a seeded permutation, or the full split.

    The permutation state lives in ``generator`` and the per-environment cursors, which
    ``state_dict`` captures so that a resumed run sees the same batches as an uninterrupted one.
    """

    def __init__(self, envs: dict[str, Split], batch_size: int | None, generator: torch.Generator):
        self.envs = envs
        self.batch_size = batch_size
        self.generator = generator
        self._perm: dict[str, torch.Tensor] = {}
        self._pos: dict[str, int] = {}

    def _full(self, name: str) -> bool:
        return self.batch_size is None or self.batch_size >= len(self.envs[name])

    def indices(self) -> dict[str, torch.Tensor | None]:
        """The rows of each environment's next batch (None: the whole split), advancing the order."""
        out: dict[str, torch.Tensor | None] = {}
        for name in self.envs:
            if self._full(name):
                out[name] = None
                continue
            n, b = len(self.envs[name]), self.batch_size
            pos = self._pos.get(name, n)
            if pos + b > n:  # new epoch; drop the ragged tail so every batch has the same size
                self._perm[name] = torch.randperm(n, generator=self.generator)
                pos = 0
            out[name] = self._perm[name][pos : pos + b]
            self._pos[name] = pos + b
        return out

    def next(self) -> dict[str, Batch]:
        out: dict[str, Batch] = {}
        for name, idx in self.indices().items():
            split = self.envs[name]
            out[name] = (split.x, split.y) if idx is None else (split.x[idx], split.y[idx])
        return out

    def state_dict(self) -> dict:
        return {"generator": self.generator.get_state(), "perm": self._perm, "pos": self._pos}

    def load_state_dict(self, state: dict) -> None:
        self.generator.set_state(state["generator"])
        self._perm, self._pos = dict(state["perm"]), dict(state["pos"])
