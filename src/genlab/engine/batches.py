"""Minibatches indexed from in-memory splits, one per training environment, seeded order."""

from __future__ import annotations

import torch

from genlab.data import Split
from genlab.methods.base import Batch


class BatchSampler:
    """Draws a batch per environment each step: epochs of a seeded permutation, the full split, or
    (for a split with a ``stream``) the next batch of fresh examples.

    The permutation state lives in ``generator`` and the per-environment cursors (and the count of
    streamed batches), which ``state_dict`` captures so that a resumed run sees the same batches as
    an uninterrupted one.
    """

    def __init__(self, envs: dict[str, Split], batch_size: int | None, generator: torch.Generator):
        self.envs = envs
        self.batch_size = batch_size
        self.generator = generator
        self._perm: dict[str, torch.Tensor] = {}
        self._pos: dict[str, int] = {}
        self._drawn: dict[str, int] = {}

    def _full(self, name: str) -> bool:
        return self.batch_size is None or self.batch_size >= len(self.envs[name])

    def indices(self) -> dict[str, torch.Tensor | None]:
        """The rows of each environment's next batch (None: the whole split), advancing the order.

        Environments that stream fresh batches have no rows and are left out."""
        out: dict[str, torch.Tensor | None] = {}
        for name in self.envs:
            if self.envs[name].stream is not None:
                continue
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
        for name, split in self.envs.items():
            if split.stream is not None:
                k = self._drawn.get(name, 0)
                out[name] = split.stream(k, self.batch_size or len(split))
                self._drawn[name] = k + 1
        for name, idx in self.indices().items():
            split = self.envs[name]
            out[name] = (split.x, split.y) if idx is None else (split.x[idx], split.y[idx])
        return out

    def state_dict(self) -> dict:
        return {
            "generator": self.generator.get_state(),
            "perm": self._perm,
            "pos": self._pos,
            "drawn": self._drawn,
        }

    def load_state_dict(self, state: dict) -> None:
        self.generator.set_state(state["generator"])
        self._perm, self._pos = dict(state["perm"]), dict(state["pos"])
        self._drawn = dict(state.get("drawn", {}))
