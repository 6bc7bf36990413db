"""V-REx: risk extrapolation by penalising the variance of the per-environment risks
(Krueger et al., 2021), as in DomainBed: weight 1 for ``vrex_penalty_anneal_iters`` updates,
``vrex_lambda`` after (and the optimiser's state reset then). DomainBed anneals for 500 of its
5,000 steps: scale ``vrex_penalty_anneal_iters`` to a shorter budget (the DomainBed sweep of
``examples/sweeps`` uses 30 of 301). Needs >= 2 training environments.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.methods.dg_shared import Ranges, buffer, env_losses, require_envs
from genlab.registry import Params


class VRExParams(Params):
    """Params of ``vrex`` (DomainBed defaults)."""

    vrex_lambda: float = Field(1e1, ge=0, description="variance penalty weight after annealing")
    vrex_penalty_anneal_iters: int = Field(500, ge=0, description="updates with weight 1")


@METHODS.register("vrex", VRExParams, papers=(), family="domain-generalization")
class VREx(Method):
    """Variance risk extrapolation: mean risk + lambda * variance of env risks (Krueger et al.)."""

    RANGES: ClassVar[Ranges] = {
        "vrex_lambda": ("log10", -1, 5),
        "vrex_penalty_anneal_iters": ("int_log10", 0, 4),
    }

    def __init__(self, params: VRExParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        require_envs(info, "vrex")

    def wrap(self, model: nn.Module) -> nn.Module:
        buffer(model, "dg_updates", torch.zeros((), dtype=torch.long))
        return model

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        p = self.params
        updates = int(getattr(model, "dg_updates", 0))
        weight = p.vrex_lambda if updates >= p.vrex_penalty_anneal_iters else 1.0
        losses = env_losses(model, batches)
        mean = losses.mean()
        penalty = ((losses - mean) ** 2).mean()
        return mean + weight * penalty, {"nll": mean.item(), "penalty": penalty.item()}

    def step(
        self, model: nn.Module, optimizer: torch.optim.Optimizer, batches: dict[str, Batch]
    ) -> dict[str, float]:
        if int(model.dg_updates) == self.params.vrex_penalty_anneal_iters:
            optimizer.state.clear()
        logs = super().step(model, optimizer, batches)
        model.dg_updates += 1
        return logs
