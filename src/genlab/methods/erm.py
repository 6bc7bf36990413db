"""Empirical risk minimisation: the mean loss over the pooled batches of all training environments."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method


@METHODS.register("erm")
class ERM(Method):
    """Empirical risk minimisation (Vapnik, 1998): pool all environments, minimise the mean loss."""

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        if len(batches) == 1:
            (x, y), = batches.values()
        else:
            x = torch.cat([b[0] for b in batches.values()])
            y = torch.cat([b[1] for b in batches.values()])
        return cross_entropy(model(x), y), {}
