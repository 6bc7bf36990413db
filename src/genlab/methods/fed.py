"""Client-side objectives of federated learning: FedAvg, FedProx and FedImpro.

Each is the local training of one client in a federated run (``genlab.fed``); the run's server
strategy is chosen by the same name. Outside a federated run (no global model, no shared
statistics) each reduces to ERM, so a conformance check can train them on one machine.

- ``fedavg``: plain local cross-entropy (McMahan et al. 2017).
- ``fedprox``: adds (mu/2)·||w - w_global||² (Li et al. 2020, "Federated Optimization in
  Heterogeneous Networks").
- ``fedimpro``: FedImpro (Tang et al. 2024, "FedImpro: Measuring and Improving Client Update in
  Federated Learning", #1): the network is split before its last linear layer; clients share
  class-conditional Gaussian statistics (mean, variance) of the features there, with Gaussian
  noise of scale ``noise`` added to the shared means (the paper's privacy knob), and the head is
  trained on real features plus features sampled from the aggregated global distribution.
"""

from __future__ import annotations

from typing import Any

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.registry import Params


def _pooled(batches: dict[str, Batch]) -> Batch:
    if len(batches) == 1:
        return next(iter(batches.values()))
    return torch.cat([b[0] for b in batches.values()]), torch.cat([b[1] for b in batches.values()])


class FedAvgParams(Params):
    """Params of ``fedavg`` (none)."""


@METHODS.register("fedavg", FedAvgParams, papers=(1,), family="fed")
class FedAvg(Method):
    """FedAvg's local objective: cross-entropy on the client's own batches (McMahan et al. 2017)."""

    def __init__(self, params: Params, info: TaskInfo) -> None:
        super().__init__(params, info)
        if info.kind != "classification":
            raise ValueError(f"method {type(self).__name__.lower()} needs a classification task")

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x, y = _pooled(batches)
        return cross_entropy(model(x), y), {}


class FedProxParams(Params):
    """Params of ``fedprox``."""

    mu: float = Field(
        0.01, ge=0, description="weight of the proximal term (mu/2)·||w - w_global||²"
    )


@METHODS.register("fedprox", FedProxParams, papers=(1,), family="fed")
class FedProx(FedAvg):
    """FedProx (Li et al. 2020): local cross-entropy plus a proximal pull to the global weights
    (``anchor``, set by the client each round; None outside a federated run)."""

    anchor: list[Tensor] | None = None

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        loss, logs = super().loss(model, batches)
        if self.anchor is None or self.params.mu == 0:
            return loss, logs
        prox = sum(
            ((w - a) ** 2).sum() for w, a in zip(model.parameters(), self.anchor, strict=True)
        )
        return loss + 0.5 * self.params.mu * prox, {"prox": prox.item()}


class FedImproParams(Params):
    """Params of ``fedimpro``."""

    noise: float = Field(0.0, ge=0, description="std of the Gaussian noise on the shared means")
    samples: int = Field(64, ge=1, description="features sampled per step for the head")
    weight: float = Field(1.0, ge=0, description="weight of the loss on sampled features")


def last_linear(model: nn.Module) -> nn.Linear:
    """The split point of FedImpro: the model's last ``nn.Linear`` (its classifier head)."""
    heads = [m for m in model.modules() if isinstance(m, nn.Linear)]
    if not heads:
        raise ValueError("method fedimpro needs a model whose classifier is an nn.Linear")
    return heads[-1]


@METHODS.register("fedimpro", FedImproParams, papers=(1,), family="fed")
class FedImpro(FedAvg):
    """FedImpro (Tang et al. 2024, #1): the head also learns from features drawn from the global
    class-conditional Gaussians ``stats = (mean [C, d], var [C, d], prior [C])``, set by the
    client each round (None outside a federated run: then it is FedAvg)."""

    stats: tuple[Tensor, Tensor, Tensor] | None = None
    gen: torch.Generator | None = None

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        loss, logs = super().loss(model, batches)
        if self.stats is None:
            return loss, logs
        mean, var, prior = self.stats
        yz = torch.multinomial(prior, self.params.samples, replacement=True, generator=self.gen)
        eps = torch.randn(len(yz), mean.shape[1], generator=self.gen, dtype=mean.dtype)
        z = mean[yz] + var[yz].sqrt() * eps
        sampled = cross_entropy(last_linear(model)(z), yz)
        return loss + self.params.weight * sampled, {"sampled_loss": sampled.item()}


def feature_stats(
    model: nn.Module, x: Tensor, y: Tensor, n_classes: int
) -> tuple[Tensor, Tensor, Tensor]:
    """Per-class count, feature sum and sum of squares at FedImpro's split (the head's input)."""
    feats: list[Tensor] = []
    handle = last_linear(model).register_forward_pre_hook(lambda _m, a: feats.append(a[0]))
    try:
        with torch.inference_mode():
            model(x)
    finally:
        handle.remove()
    f = feats[0].flatten(1).double()
    onehot = torch.nn.functional.one_hot(y, n_classes).double()
    return onehot.sum(0), onehot.T @ f, onehot.T @ (f * f)
