"""GroupDRO: minimise a weighted sum of env risks whose weights climb exponentially on the worst
environments (Sagawa et al., 2020), as in DomainBed: ``q_e <- q_e * exp(eta * R_e)``, normalised.
The weights ``q`` live in a model buffer so that checkpoints carry them.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.methods.dg_shared import Ranges, buffer, env_losses, train_envs
from genlab.registry import Params


class GroupDROParams(Params):
    """Params of ``groupdro`` (DomainBed defaults)."""

    groupdro_eta: float = Field(1e-2, gt=0, description="step size of the env weights")


@METHODS.register("groupdro", GroupDROParams, papers=(), family="domain-generalization")
class GroupDRO(Method):
    """Group distributionally robust optimisation over environments (Sagawa et al., 2020)."""

    RANGES: ClassVar[Ranges] = {"groupdro_eta": ("log10", -3, -1)}

    def __init__(self, params: GroupDROParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        if info.kind == "regression":
            raise ValueError(
                "method groupdro: env risks are cross-entropies; got a regression task"
            )

    def wrap(self, model: nn.Module) -> nn.Module:
        n = len(train_envs(self.info))
        buffer(model, "dg_groupdro_q", torch.full((n,), 1.0 / n, dtype=torch.float64))
        return model

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        losses = env_losses(model, batches)
        q = model.dg_groupdro_q
        if len(q) != len(losses):
            raise ValueError(f"groupdro: {len(losses)} env batches but {len(q)} env weights")
        with torch.no_grad():
            q.mul_(torch.exp(self.params.groupdro_eta * losses.detach().to(q.dtype)))
            q.div_(q.sum())
        loss = torch.dot(losses, q.to(losses.dtype))
        return loss, {"max_q": q.max().item()}
