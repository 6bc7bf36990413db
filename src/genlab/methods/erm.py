"""Empirical risk minimisation: the mean loss over the pooled batches of all training envs."""

from __future__ import annotations

from typing import Any, Literal

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.losses import cross_entropy, stablemax_cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.registry import Params

LOSSES = {"softmax": cross_entropy, "stablemax": stablemax_cross_entropy}


class ERMParams(Params):
    """Params of ``erm``."""

    loss: Literal["softmax", "stablemax"] = Field(
        "softmax",
        description="softmax cross-entropy, or StableMax cross-entropy (Prieto et al., #20)",
    )


@METHODS.register("erm", ERMParams, papers=(20,))
class ERM(Method):
    """Empirical risk minimisation (Vapnik, 1998): pool all environments, minimise the mean loss.

    ``loss``: ``softmax`` cross-entropy (default) or ``stablemax`` cross-entropy, the numerically
    stable head of Prieto et al. (#20); StableMax needs class labels (classification or sequence).
    """

    def __init__(self, params: ERMParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        if info.kind not in ("classification", "sequence"):
            raise ValueError(
                f"method.params.loss: {params.loss!r} cross-entropy needs a classification or "
                f"sequence task (class labels), got a {info.kind} task; use method mse"
            )
        self._loss_fn = LOSSES[params.loss]

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        if len(batches) == 1:
            ((x, y),) = batches.values()
        else:
            x = torch.cat([b[0] for b in batches.values()])
            y = torch.cat([b[1] for b in batches.values()])
        return self._loss_fn(model(x), y), {}
