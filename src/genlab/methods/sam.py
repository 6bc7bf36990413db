"""``sam``: sharpness-aware minimisation (Foret et al., ICLR 2021), and ASAM (Kwon et al. 2021).

Each step takes the gradient ``g`` of the loss, moves the weights to the worst point of a ball,
``w + e`` with ``e = rho * g / ||g||`` (ASAM: ``e = rho * w^2 g / ||w g||``, a ball scaled by the
weights), takes the gradient there, returns to ``w`` and lets the optimiser step with that second
gradient. BatchNorm statistics are not updated on the second pass. The loss is ERM's on the pooled
environments (``loss``: softmax or StableMax cross-entropy). Cited for the training-regime claims: Nguyen et al. (USEFUL, #80) compare SAM with
(S)GD; Wen et al. (#97) study what SAM minimises.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from pydantic import Field
from torch import nn

from genlab.methods import METHODS
from genlab.methods.base import Batch
from genlab.methods.erm import ERM, ERMParams


class SAMParams(ERMParams):
    """Params of ``sam``."""

    rho: float = Field(0.05, gt=0, description="radius of the neighbourhood")
    adaptive: bool = Field(False, description="ASAM: the ball scaled by |w| (use a larger rho)")


@contextmanager
def frozen_bn(model: nn.Module) -> Iterator[None]:
    """BatchNorm running statistics unchanged inside the block (momentum 0)."""
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    saved = [m.momentum for m in norms]
    for m in norms:
        m.momentum = 0.0
    try:
        yield
    finally:
        for m, mom in zip(norms, saved, strict=True):
            m.momentum = mom


@METHODS.register("sam", SAMParams, papers=(80, 97), family="training-regime")
class SAM(ERM):
    """Sharpness-aware minimisation: the gradient taken at the worst point of a rho-ball."""

    def step(
        self, model: nn.Module, optimizer: torch.optim.Optimizer, batches: dict[str, Batch]
    ) -> dict[str, float]:
        p: SAMParams = self.params  # type: ignore[assignment]
        params = [q for q in model.parameters() if q.requires_grad]
        optimizer.zero_grad(set_to_none=True)
        loss, logs = self.loss(model, batches)
        loss.backward()
        with torch.no_grad():
            scaled = [
                (q.abs() if p.adaptive else 1.0) * q.grad for q in params if q.grad is not None
            ]
            norm = torch.norm(torch.stack([s.norm() for s in scaled])) if scaled else None
            eps = []
            for q in params:
                if q.grad is None or norm is None:
                    eps.append(None)
                    continue
                e = (q.pow(2) if p.adaptive else 1.0) * q.grad * (p.rho / (norm + 1e-12))
                q.add_(e)
                eps.append(e)
        optimizer.zero_grad(set_to_none=True)
        with frozen_bn(model):
            sharp, _ = self.loss(model, batches)
        sharp.backward()
        with torch.no_grad():
            for q, e in zip(params, eps, strict=True):
                if e is not None:
                    q.sub_(e)
        self.clip(model)
        optimizer.step()
        return {"loss": loss.item(), "sam_loss": sharp.item(), **logs}
