"""``ewc``: Elastic Weight Consolidation (Kirkpatrick et al. 2017, "Overcoming catastrophic
forgetting in neural networks"), in Avalanche's ``EWC`` form (mode ``separate``): after each
experience, the diagonal Fisher information is estimated from squared minibatch gradients on that
experience's data (here a bounded reservoir sample of its stream), and every later step adds
``ewc_lambda * sum_k sum_i F_k,i (theta_i - theta_k,i)^2``. A baseline of Model Zoo (#120) and
fast/slow weights (#95)."""

from __future__ import annotations

from typing import Any

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.methods import METHODS
from genlab.methods.base import Batch
from genlab.methods.cl_base import Continual
from genlab.methods.cl_buffer import ExperienceBuffer
from genlab.registry import Params


class EWCParams(Params):
    """Params of ``ewc``."""

    ewc_lambda: float = Field(100.0, ge=0, description="weight of the quadratic penalty")
    fisher_samples: int = Field(256, ge=1, description="examples the Fisher is estimated on")
    fisher_batch: int = Field(32, ge=1, description="minibatch size of the squared gradients")


@METHODS.register("ewc", EWCParams, papers=(120, 95), family="continual")
class EWC(Continual):
    """Cross-entropy + the Fisher-weighted distance to each past experience's final weights."""

    def __init__(self, params: EWCParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        self.pool = ExperienceBuffer(params.fisher_samples)
        self.anchors: list[list[Tensor]] = []
        self.fishers: list[list[Tensor]] = []

    def before_experience(self, model: nn.Module, k: int) -> None:
        if k > 0:
            self.fishers.append(self.fisher(model, k - 1))
            self.anchors.append([p.detach().clone() for p in model.parameters()])
        self.pool = ExperienceBuffer(self.params.fisher_samples)

    def fisher(self, model: nn.Module, k: int) -> list[Tensor]:
        """Mean squared minibatch gradient of the loss on experience ``k``'s sample."""
        x, y = self.pool.x[0], self.pool.y[0]
        imp = [torch.zeros_like(p) for p in model.parameters()]
        chunks = range(0, len(y), self.params.fisher_batch)
        for i in chunks:
            model.zero_grad(set_to_none=True)
            sl = slice(i, i + self.params.fisher_batch)
            self.ce(model, x[sl], y[sl], k).backward()
            for f, p in zip(imp, model.parameters(), strict=True):
                if p.grad is not None:
                    f += p.grad.detach() ** 2
        model.zero_grad(set_to_none=True)
        return [f / len(chunks) for f in imp]

    def penalty(self, model: nn.Module) -> Tensor:
        total = torch.zeros(())
        for fisher, anchor in zip(self.fishers, self.anchors, strict=True):
            for f, a, p in zip(fisher, anchor, model.parameters(), strict=True):
                total = total + (f * (p - a) ** 2).sum()
        return total

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x, y = self.current(batches)
        self.pool.add(x, y, 0)
        pen = self.penalty(model)
        return self.ce(model, x, y, self.exp) + self.params.ewc_lambda * pen, {
            "ewc_penalty": pen.item()
        }

    def state_dict(self) -> dict[str, Any]:
        return {
            **super().state_dict(),
            "pool": self.pool.state_dict(),
            "anchors": self.anchors,
            "fishers": self.fishers,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        if "pool" in state:
            self.pool.load_state_dict(state["pool"])
            self.anchors, self.fishers = list(state["anchors"]), list(state["fishers"])
