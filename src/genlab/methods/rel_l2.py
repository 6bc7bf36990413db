"""Relative L2 loss, the training loss of neural operators (``neuralop.losses.LpLoss`` with p = 2,
relative, averaged over the batch; Kossaifi et al., MG-TFNO, #29)."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.registry import NoParams


@METHODS.register("rel_l2", NoParams, papers=(29,), family="operators")
class RelL2(Method):
    """Mean over examples of ``|f(x) - y|₂ / |y|₂`` (each example flattened), for regression."""

    def __init__(self, params: NoParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        if info.kind != "regression":
            raise ValueError(f"method 'rel_l2' needs a regression task, got kind {info.kind!r}")

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x = torch.cat([b[0] for b in batches.values()])
        y = torch.cat([b[1] for b in batches.values()])
        pred = model(x)
        diff = (pred - y.to(pred.dtype)).reshape(len(y), -1).norm(dim=1)
        return (diff / y.reshape(len(y), -1).norm(dim=1).clamp_min(1e-12)).mean(), {}
