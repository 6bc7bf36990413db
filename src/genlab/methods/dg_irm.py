"""IRMv1: invariant risk minimisation (Arjovsky et al., 2019), as in DomainBed.

Penalty per environment: the squared gradient of the risk with respect to a dummy classifier scale
``w = 1`` (estimated without bias as the product of the gradients on the two halves of the batch).
The penalty weight is 1 for the first ``irm_penalty_anneal_iters`` updates and ``irm_lambda`` after,
when the optimiser's state is reset (DomainBed resets Adam there). The loss is
``nll + weight * penalty``, not rescaled, as in DomainBed's ``IRM.update`` (Arjovsky et al.'s own
ColoredMNIST code divides the loss by the weight once it exceeds 1; with Adam the two differ only
through Adam's epsilon). DomainBed anneals for 500 of its 5,000 steps: scale
``irm_penalty_anneal_iters`` to a shorter budget (the DomainBed sweep of ``examples/sweeps`` uses
30 of 301). Needs >= 2 training environments.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from pydantic import Field
from torch import Tensor, autograd, nn

from genlab.data import TaskInfo
from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.methods.dg_shared import Ranges, buffer, env_logits, require_envs
from genlab.registry import Params


class IRMParams(Params):
    """Params of ``irm`` (DomainBed defaults)."""

    irm_lambda: float = Field(1e2, ge=0, description="penalty weight after annealing")
    irm_penalty_anneal_iters: int = Field(500, ge=0, description="updates with penalty weight 1")


def irm_penalty(logits: Tensor, y: Tensor) -> Tensor:
    """``grad_w R(w * logits)|_{w=1}`` on the even half times that on the odd half."""
    scale = torch.ones((), dtype=logits.dtype, requires_grad=True)
    loss_1 = cross_entropy(logits[::2] * scale, y[::2])
    loss_2 = cross_entropy(logits[1::2] * scale, y[1::2])
    grad_1 = autograd.grad(loss_1, [scale], create_graph=True)[0]
    grad_2 = autograd.grad(loss_2, [scale], create_graph=True)[0]
    return grad_1 * grad_2


@METHODS.register("irm", IRMParams, papers=(), family="domain-generalization")
class IRM(Method):
    """Invariant risk minimisation, IRMv1 penalty with annealing (Arjovsky et al., 2019)."""

    RANGES: ClassVar[Ranges] = {
        "irm_lambda": ("log10", -1, 5),
        "irm_penalty_anneal_iters": ("int_log10", 0, 4),
    }

    def __init__(self, params: IRMParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        require_envs(info, "irm")

    def wrap(self, model: nn.Module) -> nn.Module:
        buffer(model, "dg_updates", torch.zeros((), dtype=torch.long))
        return model

    def penalty_weight(self, updates: int) -> float:
        p = self.params
        return p.irm_lambda if updates >= p.irm_penalty_anneal_iters else 1.0

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        weight = self.penalty_weight(int(getattr(model, "dg_updates", 0)))
        parts = env_logits(model, batches)
        nll = torch.stack([cross_entropy(lo, y) for lo, y in parts]).mean()
        penalty = torch.stack([irm_penalty(lo, y) for lo, y in parts]).mean()
        loss = nll + weight * penalty
        return loss, {"nll": nll.item(), "penalty": penalty.item()}

    def step(
        self, model: nn.Module, optimizer: torch.optim.Optimizer, batches: dict[str, Batch]
    ) -> dict[str, float]:
        if int(model.dg_updates) == self.params.irm_penalty_anneal_iters:
            optimizer.state.clear()
        logs = super().step(model, optimizer, batches)
        model.dg_updates += 1
        return logs
