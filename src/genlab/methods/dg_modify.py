"""MoDify: momentum difficulty for domain generalization (Jiang et al., ICCV 2023, #74).

Two parts, as the catalogue row describes them: (1) RGB-Shuffle, a photometric augmentation that
permutes each image's color channels at random, producing harder samples on the fly; (2) difficulty
scheduling: the model's capability is a momentum (EMA) estimate of its loss on the original samples
(a model buffer), and only augmented samples whose loss is at most ``(1 + tolerance)`` times that
capability are trained on, so the difficulty of what it learns from tracks what it can do:

    CE(x, y) + modify_lambda * mean_{i : CE(aug x_i) <= (1 + tolerance) * capability} CE(aug x_i)

The paper's exact schedule differs in detail; this is our reading of its abstract.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.methods.dg_shared import Ranges, buffer, pooled
from genlab.registry import Params


class MoDifyParams(Params):
    """Params of ``modify``."""

    modify_lambda: float = Field(1.0, ge=0, description="weight of the scheduled augmented loss")
    tolerance: float = Field(
        0.5, ge=0, description="admit augmented losses <= (1+tol) * capability"
    )
    momentum: float = Field(0.9, ge=0, lt=1, description="EMA momentum of the capability")


def rgb_shuffle(x: Tensor, gen: torch.Generator | None = None) -> Tensor:
    """Each image's channels in a random order (one permutation per image)."""
    n, c = x.shape[:2]
    perm = torch.argsort(torch.rand(n, c, generator=gen), dim=1)
    return torch.gather(x, 1, perm[:, :, None, None].expand_as(x))


@METHODS.register("modify", MoDifyParams, papers=(74,), family="domain-generalization")
class MoDify(Method):
    """RGB-Shuffle augmentation with momentum-difficulty scheduling (Jiang et al., #74)."""

    RANGES: ClassVar[Ranges] = {"modify_lambda": ("log10", -1, 1), "tolerance": ("uniform", 0, 1)}

    def __init__(self, params: MoDifyParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        if len(info.input_shape) != 3 or info.input_shape[0] < 2:
            raise ValueError("method 'modify' needs images with >= 2 color channels (RGB-Shuffle)")

    def wrap(self, model: nn.Module) -> nn.Module:
        buffer(model, "dg_capability", torch.full((), float("nan"), dtype=torch.float64))
        return model

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x, y, _ = pooled(batches)
        aug = rgb_shuffle(x)
        logits = model(torch.cat([x, aug]))
        ce = cross_entropy(logits[: len(y)], y)
        per = cross_entropy(logits[len(y) :], y, reduction="none")
        cap = model.dg_capability
        with torch.no_grad():
            m = self.params.momentum
            cap.copy_(ce.detach() if torch.isnan(cap) else m * cap + (1 - m) * ce.detach())
        keep = per.detach() <= (1 + self.params.tolerance) * cap.to(per.dtype)
        aug_loss = per[keep].mean() if keep.any() else per.sum() * 0
        loss = ce + self.params.modify_lambda * aug_loss
        return loss, {"ce": ce.item(), "kept": keep.float().mean().item()}
