"""MLDG: meta-learning for domain generalization (Li, Yang, Song & Hospedales, AAAI 2018), in two
forms, chosen by ``mldg_inner``:

- ``"adam"`` (the default; DomainBed's ``MLDG``, Gulrajani & Lopez-Paz 2021): for a random cycle of
  environment pairs ``(i, j)``, env ``i`` is meta-train and env ``j`` meta-test; the inner step is
  one step of a fresh Adam on ``L_i`` (``theta' = theta - lr * g / (|g| + 1e-8)``, exactly Adam's
  first update), first order (the step is not differentiated); the update minimises
  ``L_i(theta) + beta * L_j(theta')`` averaged over the pairs.
- ``"sgd"`` (the paper and its official code): one random environment is meta-test, the others
  meta-train; ``theta' = theta - alpha * grad F(theta)`` is an SGD step on their mean loss ``F``,
  differentiated through (second order, the code's default ``stop_gradient=False``); the update
  minimises ``F(theta) + beta * G(theta')``. (The official code sums the meta-train losses where
  the paper's equation averages them; we average.)

``mldg_inner_lr`` is the inner step size (``alpha``); ``None`` uses the optimiser's learning rate,
as DomainBed does (the official code used a separate 0.5 on pre-extracted features). The inner
Adam step carries no weight decay (DomainBed passes the run's, 0 in its defaults). Needs >= 2
training environments.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import torch
from pydantic import Field
from torch import Tensor, nn
from torch.func import functional_call

from genlab.data import TaskInfo
from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.methods.dg_mixup import random_pairs
from genlab.methods.dg_shared import Ranges, require_envs
from genlab.registry import Params

ADAM_EPS = 1e-8


class MLDGParams(Params):
    """Params of ``mldg`` (DomainBed's defaults)."""

    mldg_beta: float = Field(1.0, ge=0, description="weight of the meta-test loss")
    mldg_inner: Literal["adam", "sgd"] = Field(
        "adam", description="adam: DomainBed's pairs, Adam step, first order; sgd: the paper's"
    )
    mldg_inner_lr: float | None = Field(None, gt=0, description="inner step; None: optimiser lr")


def _loss(model: nn.Module, params: dict[str, Tensor], batch: Batch) -> Tensor:
    return cross_entropy(functional_call(model, params, (batch[0],), strict=False), batch[1])


def mldg_objective(
    model: nn.Module,
    batches: list[Batch],
    pairs: list[tuple[int, int]],
    inner_lr: float,
    beta: float,
    inner: Literal["adam", "sgd"] = "adam",
) -> Tensor:
    """The MLDG objective whose gradient is the update (see the module docstring). ``pairs``
    lists (meta-train, meta-test) index pairs for ``"adam"``; for ``"sgd"`` its first pair's
    second index is the meta-test environment and every other environment is meta-train."""
    params = {n: p for n, p in model.named_parameters() if p.requires_grad}
    names, values = list(params), list(params.values())

    def step(loss: Tensor, second_order: bool) -> dict[str, Tensor]:
        grads = torch.autograd.grad(
            loss, values, retain_graph=True, allow_unused=True, create_graph=second_order
        )
        out = {}
        for n, p, g in zip(names, values, grads, strict=True):
            if g is None:
                out[n] = p
            elif second_order:
                out[n] = p - inner_lr * g
            else:
                g = g.detach()
                out[n] = p - (
                    inner_lr * g / (g.abs() + ADAM_EPS) if inner == "adam" else inner_lr * g
                )
        return out

    if inner == "sgd":
        test = pairs[0][1]
        meta_train = torch.stack(
            [_loss(model, params, b) for k, b in enumerate(batches) if k != test]
        ).mean()
        return meta_train + beta * _loss(model, step(meta_train, True), batches[test])
    total = torch.zeros(())
    for i, j in pairs:
        loss_i = _loss(model, params, batches[i])
        total = total + loss_i + beta * _loss(model, step(loss_i, False), batches[j])
    return total / len(pairs)


@METHODS.register("mldg", MLDGParams, papers=(), family="domain-generalization")
class MLDG(Method):
    """Meta-learning DG: meta-train on some envs, meta-test on another (Li et al., 2018)."""

    RANGES: ClassVar[Ranges] = {"mldg_beta": ("log10", -1, 1)}

    def __init__(self, params: MLDGParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        require_envs(info, "mldg")
        self._lr = 1e-3

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        p = self.params
        envs = list(batches.values())
        pairs = random_pairs(len(envs))
        lr = p.mldg_inner_lr or self._lr
        return mldg_objective(model, envs, pairs, lr, p.mldg_beta, p.mldg_inner), {}

    def step(
        self, model: nn.Module, optimizer: torch.optim.Optimizer, batches: dict[str, Batch]
    ) -> dict[str, float]:
        self._lr = optimizer.param_groups[0]["lr"]
        return super().step(model, optimizer, batches)
