"""The method contract: ``loss`` over per-environment batches, ``step`` around it, ``wrap`` a model.

After DomainBed's ``Algorithm`` (Gulrajani & Lopez-Paz, 2021), with the optimiser built outside the
method from the run spec, so that a method is only what it changes about training.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.registry import Params

Batch = tuple[Tensor, Tensor]


class Method:
    """Base class. Subclasses override ``loss`` (most), ``step`` (SAM-like) or ``wrap`` (layers).

    ``grad_clip`` (set by the engine from ``optimizer.grad_clip``) caps the global gradient norm
    before each update; a method that overrides ``step`` calls ``self.clip(model)`` likewise.
    """

    grad_clip: float | None = None
    total_steps: int = 0  # set by the engine from ``spec.steps`` (a continual method's schedule)

    def __init__(self, params: Params, info: TaskInfo) -> None:
        self.params = params
        self.info = info

    def wrap(self, model: nn.Module) -> nn.Module:
        """Return the model to train (default: unchanged)."""
        return model

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        raise NotImplementedError

    def step(
        self, model: nn.Module, optimizer: torch.optim.Optimizer, batches: dict[str, Batch]
    ) -> dict[str, float]:
        """One update; returns floats to log, including ``loss``."""
        optimizer.zero_grad(set_to_none=True)
        loss, logs = self.loss(model, batches)
        loss.backward()
        self.clip(model)
        optimizer.step()
        return {"loss": loss.item(), **logs}

    def eval_points(self) -> set[int]:
        """Steps the engine must evaluate at besides its schedule (a continual method's
        experience boundaries); default none."""
        return set()

    def state_dict(self) -> dict[str, Any]:
        """What the method holds across steps (a replay buffer, EWC's anchors), checkpointed with
        the run so that a resumed run continues it; tensors and plain values only."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore ``state_dict``'s output (default: nothing to restore)."""

    def clip(self, model: nn.Module) -> None:
        """Clip the global gradient norm to ``grad_clip`` (no-op when unset)."""
        if self.grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), self.grad_clip)
