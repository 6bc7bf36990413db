"""Squared-error regression: ``(1/2N) sum_n |f(x_n) - y_n|²``, whose gradient on a linear student
``S`` is ``(S - T) Σ̂`` with ``Σ̂`` the empirical input covariance (Levi et al., #53)."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.registry import NoParams


@METHODS.register("mse", NoParams, papers=(53,), family="grokking")
class MSE(Method):
    """Half the mean over samples of the summed squared error, for regression targets."""

    def __init__(self, params: NoParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        if info.kind != "regression":
            raise ValueError(f"method 'mse' needs a regression task, got kind {info.kind!r}")

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x = torch.cat([b[0] for b in batches.values()])
        y = torch.cat([b[1] for b in batches.values()])
        pred = model(x)
        return 0.5 * (pred - y.to(pred.dtype)).pow(2).sum(-1).mean(), {}
