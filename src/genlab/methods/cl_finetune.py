"""The two reference points of continual learning: ``finetune`` (train on each experience in
turn, nothing done against forgetting: the lower bound) and ``joint`` (train on every experience
at once: the upper bound), as Avalanche's ``Naive`` and ``JointTraining`` strategies. Baselines of
the Model Zoo (#120) and fast/slow-weights (#95) comparisons."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from genlab.methods import METHODS
from genlab.methods.base import Batch
from genlab.methods.cl_base import Continual
from genlab.registry import NoParams


@METHODS.register("finetune", NoParams, papers=(120, 95), family="continual")
class Finetune(Continual):
    """Train on the current experience only (catastrophic forgetting's reference)."""

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x, y = self.current(batches)
        return self.ce(model, x, y, self.exp), {}


@METHODS.register("joint", NoParams, papers=(120, 95), family="continual")
class Joint(Continual):
    """Train on every experience's batch at each step (not continual: the upper bound)."""

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        terms = [self.ce(model, *batches[f"e{k}"], k) for k in range(self.n)]
        return torch.stack(terms).mean(), {}
