"""Winsorised-gradient descent: the robust-mean step of Chatterjee & Zielinski (2022), #51.

The coherent-gradients account of generalization says that directions supported by many examples
("strong" directions) drive learning while directions supported by few (memorising single, often
mislabelled examples) are "weak". Replacing the mean of the per-example gradients by a robust
mean suppresses the weak directions: every coordinate of the per-example gradients is winsorised
to the ``c``-th smallest and ``c``-th largest values across the batch before averaging, as in
Zielinski et al. ("Weak and strong gradient directions", 2020). Per-example gradients come from
``torch.func.vmap(grad)``; the optimiser then steps on the robust mean as usual.
"""

from __future__ import annotations

import torch
from pydantic import Field
from torch import nn

from genlab.data import TaskInfo
from genlab.grads import per_sample_grads_dict
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.registry import Params


class RobustMeanParams(Params):
    """Params of ``robust_mean``."""

    c: int = Field(2, ge=0, description="examples clipped at each end, per coordinate (0: ERM)")


def winsorised_mean(g: torch.Tensor, c: int) -> torch.Tensor:
    """Mean over dim 0 after clamping every coordinate to its ``(c+1)``-th smallest and largest
    values across the batch (``c = 0``: the plain mean)."""
    if c == 0 or len(g) <= 2 * c:
        return g.mean(0)
    s = g.sort(0).values
    return g.clamp(min=s[c], max=s[-c - 1]).mean(0)


@METHODS.register("robust_mean", RobustMeanParams, papers=(51,), family="diag")
class RobustMean(Method):
    """ERM with the batch gradient replaced by the winsorised mean of per-example gradients
    (Chatterjee & Zielinski, #51). Params: ``c`` (examples clipped per coordinate at each end)."""

    def __init__(self, params: RobustMeanParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        if info.kind == "regression":
            raise ValueError("method robust_mean: per-example cross-entropy; got a regression task")

    def step(
        self, model: nn.Module, optimizer: torch.optim.Optimizer, batches: dict[str, Batch]
    ) -> dict[str, float]:
        x = torch.cat([b[0] for b in batches.values()])
        y = torch.cat([b[1] for b in batches.values()])
        grads, loss = per_sample_grads_dict(model, x, y)
        optimizer.zero_grad(set_to_none=True)
        params = dict(model.named_parameters())
        for name, g in grads.items():
            params[name].grad = winsorised_mean(g, self.params.c).to(params[name].dtype)
        self.clip(model)
        optimizer.step()
        return {"loss": float(loss)}
