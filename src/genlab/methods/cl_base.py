"""The base of continual methods: the experience schedule, task-incremental masking and the
checkpointed state that every continual method shares.

A continual run is one ``RunSpec`` on a ``cl_split`` task: its ``steps`` are cut into equal
experiences (the last takes the remainder); at step ``t`` the method trains on experience
``(t - 1) // (steps // n)``, and the engine evaluates at every boundary, so the store holds the
accuracy matrix R[i, j] (``genlab.analysis.continual``). As Avalanche's ``BaseStrategy``, a method
sees ``before_experience`` (with the model as it ended the previous one) and then batches of the
current experience; it may not look at a later experience's data. In the task-incremental scenario
the logits are masked to the experience's classes (a multi-head model's single-head form).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from genlab.analysis.continual import boundaries
from genlab.data import TaskInfo
from genlab.losses import cross_entropy
from genlab.methods.base import Batch, Method
from genlab.registry import Params


class Continual(Method):
    """Base class; subclasses implement ``loss`` (the current experience is ``self.exp``) and may
    override ``before_experience``."""

    def __init__(self, params: Params, info: TaskInfo) -> None:
        super().__init__(params, info)
        if "experiences" not in info.extra:
            raise ValueError(
                f"method {type(self).__name__.lower()} needs a continual task (task.name=cl_split)"
            )
        self.n: int = info.extra["experiences"]
        self.classes: list[list[int]] = info.extra["classes"]
        mask = torch.zeros(self.n, info.n_outputs, dtype=torch.bool)
        for k, cls in enumerate(self.classes):
            mask[k, cls] = True
        self.mask = mask if info.extra.get("scenario") == "task" else None
        self.t = 0
        self.exp = -1

    # ---- the schedule -----------------------------------------------------------------------

    @property
    def per_experience(self) -> int:
        return max(1, self.total_steps // self.n)

    def experience_at(self, step: int) -> int:
        """The experience trained at optimiser step ``step`` (1-based)."""
        return min((step - 1) // self.per_experience, self.n - 1)

    def eval_points(self) -> set[int]:
        return set(boundaries(self.total_steps, self.n))

    def step(
        self, model: nn.Module, optimizer: torch.optim.Optimizer, batches: dict[str, Batch]
    ) -> dict[str, float]:
        self.t += 1
        k = self.experience_at(self.t)
        while self.exp < k:
            self.exp += 1
            self.before_experience(model, self.exp)
        return super().step(model, optimizer, batches)

    def before_experience(self, model: nn.Module, k: int) -> None:
        """Called once as experience ``k`` starts (the model is as experience ``k - 1`` left it)."""

    # ---- losses -----------------------------------------------------------------------------

    def masked(self, logits: Tensor, exps: Tensor | int) -> Tensor:
        """Task-incremental: logits outside the classes of each row's experience set to -inf."""
        if self.mask is None:
            return logits
        rows = self.mask[exps] if isinstance(exps, Tensor) else self.mask[exps].expand_as(logits)
        return logits.masked_fill(~rows, torch.finfo(logits.dtype).min)

    def ce(self, model: nn.Module, x: Tensor, y: Tensor, exps: Tensor | int) -> Tensor:
        return cross_entropy(self.masked(model(x), exps), y)

    def current(self, batches: dict[str, Batch]) -> Batch:
        return batches[f"e{self.exp}"]

    # ---- checkpointed state -----------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        return {"t": self.t, "exp": self.exp}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.t, self.exp = state.get("t", 0), state.get("exp", -1)
