"""MLDG: meta-learning for domain generalization (Li et al., 2018), DomainBed's first-order form.

For a random cycle of environment pairs ``(i, j)``: take a virtual SGD step on env ``i``
(``theta' = theta - lr * grad L_i``, the gradient detached: first order), and minimise
``L_i(theta) + mldg_beta * L_j(theta')``, averaged over pairs. ``lr`` is the optimiser's current
learning rate. Needs >= 2 training environments.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from pydantic import Field
from torch import Tensor, nn
from torch.func import functional_call

from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods._dg import Ranges, require_envs
from genlab.methods.base import Batch, Method
from genlab.methods.dg_mixup import random_pairs
from genlab.registry import Params
from genlab.tasks.base import TaskInfo


class MLDGParams(Params):
    """Params of ``mldg`` (DomainBed default)."""

    mldg_beta: float = Field(1.0, ge=0, description="weight of the meta-test loss")


def mldg_objective(
    model: nn.Module,
    batches: list[Batch],
    pairs: list[tuple[int, int]],
    inner_lr: float,
    beta: float,
) -> Tensor:
    """Mean over pairs of ``L_i(theta) + beta * L_j(theta - lr * grad L_i(theta).detach())``."""
    params = {n: p for n, p in model.named_parameters() if p.requires_grad}
    total = torch.zeros(())
    for i, j in pairs:
        xi, yi = batches[i]
        loss_i = cross_entropy(model(xi), yi)
        grads = torch.autograd.grad(
            loss_i, list(params.values()), retain_graph=True, allow_unused=True
        )
        inner = {
            n: p - inner_lr * g.detach() if g is not None else p
            for (n, p), g in zip(params.items(), grads, strict=True)
        }
        xj, yj = batches[j]
        loss_j = cross_entropy(functional_call(model, inner, (xj,), strict=False), yj)
        total = total + loss_i + beta * loss_j
    return total / len(pairs)


@METHODS.register("mldg", MLDGParams, papers=(), family="domain-generalization")
class MLDG(Method):
    """Meta-learning DG, first-order: meta-train on one env, meta-test on another (Li et al.)."""

    RANGES: ClassVar[Ranges] = {"mldg_beta": ("log10", -1, 1)}

    def __init__(self, params: MLDGParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        require_envs(info, "mldg")
        self._lr = 1e-3

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        envs = list(batches.values())
        pairs = random_pairs(len(envs))
        return mldg_objective(model, envs, pairs, self._lr, self.params.mldg_beta), {}

    def step(
        self, model: nn.Module, optimizer: torch.optim.Optimizer, batches: dict[str, Batch]
    ) -> dict[str, float]:
        self._lr = optimizer.param_groups[0]["lr"]
        return super().step(model, optimizer, batches)
