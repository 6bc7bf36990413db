"""``bang``: fine-tuning with label smoothing and Mixup, BANG's remedy for over-confidence.

Lin et al. ("Spurious Feature Diversification Improves OOD Generalization", ICLR 2024, #16) find
that WiSE-FT's average is pulled towards the fine-tuned model's over-confident wrong predictions
out of distribution; BAlaNced averaGing (BANG) fine-tunes with Mixup (Zhang et al. 2018) and/or
label smoothing (Szegedy et al. 2016) before averaging. Mixup here mixes examples of the pooled
batch with a shuffled copy of itself, ``x = lam x_i + (1 - lam) x_j`` with
``lam ~ Beta(mixup_alpha, mixup_alpha)``, and mixes the smoothed targets with the same ``lam``.
Randomness comes from torch's global RNG, seeded by the run's ``seed``. The values used by the
paper are not given in its abstract; the defaults are the usual ones.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.methods.dg_shared import pooled
from genlab.registry import Params


class BangParams(Params):
    """Params of ``bang``."""

    label_smoothing: float = Field(0.1, ge=0, lt=1, description="mass spread over all classes")
    mixup_alpha: float = Field(0.2, ge=0, description="Beta(alpha, alpha) mixing; 0 turns it off")


def soft_cross_entropy(logits: Tensor, target: Tensor) -> Tensor:
    """Cross-entropy against a probability vector per example."""
    return -(target * F.log_softmax(logits, dim=-1)).sum(dim=-1).mean()


@METHODS.register("bang", BangParams, papers=(16,), family="ensembles")
class Bang(Method):
    """ERM with label smoothing and Mixup: the fine-tuning of BANG (Lin et al., #16)."""

    def __init__(self, params: BangParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        if info.kind != "classification":
            raise ValueError("method 'bang' needs a classification task")

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        p: BangParams = self.params  # type: ignore[assignment]
        x, y, _ = pooled(batches)
        k = self.info.n_outputs
        target = F.one_hot(y, k).to(x.dtype if x.is_floating_point() else torch.float32)
        target = target * (1 - p.label_smoothing) + p.label_smoothing / k
        if p.mixup_alpha > 0 and x.is_floating_point():
            lam = torch.distributions.Beta(p.mixup_alpha, p.mixup_alpha).sample().item()
            perm = torch.randperm(len(y))
            x = lam * x + (1 - lam) * x[perm]
            target = lam * target + (1 - lam) * target[perm]
        return soft_cross_entropy(model(x), target.to(x.dtype)), {}
