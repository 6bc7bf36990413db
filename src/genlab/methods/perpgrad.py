"""perpGrad (⊥Grad): remove the gradient component along the weights before the optimiser update.

Prieto et al., "Grokking at the Edge of Numerical Stability" (ICLR 2025, catalogue #20): once a
network fits its training set, the loss keeps falling by scaling the logits up along the weights
(naive loss minimisation), which delays generalization and ends in softmax collapse. perpGrad
projects, per parameter tensor, ``g <- g - (g·θ / ||θ||²) θ``, and (as in the authors' code)
rescales the result back to the norm of ``g``.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field
from torch import nn

from genlab.methods import METHODS
from genlab.methods.base import Batch
from genlab.methods.erm import ERM
from genlab.registry import Params

EPS = 1e-30


class PerpGradParams(Params):
    """Params of ``perpgrad``."""

    loss: Literal["softmax", "stablemax"] = Field("softmax", description="the classification loss")
    renormalize: bool = Field(True, description="rescale the projected gradient to |g|")


@torch.no_grad()
def project_out_weights(model: nn.Module, renormalize: bool = True) -> None:
    """In place, make each parameter's gradient orthogonal to the parameter (Prieto et al., #20)."""
    for p in model.parameters():
        if p.grad is None:
            continue
        w, g = p.reshape(-1), p.grad.reshape(-1)
        g_perp = g - (w @ g) / (w @ w + EPS) * w
        if renormalize:
            g_perp *= g.norm() / (g_perp.norm() + EPS)
        p.grad.copy_(g_perp.view_as(p.grad))


@METHODS.register("perpgrad", PerpGradParams, papers=(20,), family="grokking")
class PerpGrad(ERM):
    """ERM whose step removes the gradient component along the weights (⊥Grad, Prieto et al., #20).

    Params: ``loss`` (softmax | stablemax), ``renormalize`` (keep the gradient's norm).
    """

    def step(
        self, model: nn.Module, optimizer: torch.optim.Optimizer, batches: dict[str, Batch]
    ) -> dict[str, float]:
        optimizer.zero_grad(set_to_none=True)
        loss, logs = self.loss(model, batches)
        loss.backward()
        project_out_weights(model, self.params.renormalize)
        self.clip(model)
        optimizer.step()
        return {"loss": loss.item(), **logs}
