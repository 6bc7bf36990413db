"""DMG: domain-specific masks for generalization (Chattopadhyay, Balaji & Hoffman, ECCV 2020, #75).

One soft mask over the penultimate features per training environment (``sigmoid`` of learned
logits; the paper samples hard masks with a straight-through estimator, we keep them soft). Env
``e``'s batch is classified from ``f * m_e``; a penalty on the soft IoU of every pair of masks,
``sum(m_i m_j) / sum(m_i + m_j - m_i m_j)``, weighted by ``dmg_lambda``, keeps them apart. On any
input outside training (evaluation), the prediction averages the softmax over all masks.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods._dg import Ranges, check_features, classifier, featurize, require_envs
from genlab.methods.base import Batch, Method
from genlab.registry import Params


class DMGParams(Params):
    """Params of ``dmg``."""

    dmg_lambda: float = Field(0.1, ge=0, description="weight of the mask-overlap penalty")


def soft_iou(a: Tensor, b: Tensor) -> Tensor:
    """``sum(a b) / sum(a + b - a b)`` for masks in [0, 1]."""
    inter = (a * b).sum()
    return inter / (a.sum() + b.sum() - inter).clamp_min(1e-12)


class MaskedModel(nn.Module):
    """The backbone with one feature mask per training environment; forward averages the masks."""

    def __init__(self, base: nn.Module, envs: list[str]) -> None:
        super().__init__()
        self.base, self.envs = base, list(envs)
        self.classifier = classifier(base)
        d = self.classifier.in_features
        self.mask_logits = nn.Parameter(torch.zeros(len(envs), d))

    def masks(self) -> Tensor:
        return torch.sigmoid(self.mask_logits)

    def featurize(self, x: Tensor) -> Tensor:
        return featurize(self.base, x)

    def env_logits(self, feats: Tensor, env: int) -> Tensor:
        return self.classifier(feats * self.masks()[env])

    def forward(self, x: Tensor) -> Tensor:
        f = self.featurize(x)
        probs = torch.stack([self.env_logits(f, e).softmax(-1) for e in range(len(self.envs))])
        return probs.mean(0).clamp_min(1e-12).log()


@METHODS.register("dmg", DMGParams, papers=(75,), family="domain-generalization")
class DMG(Method):
    """Domain-specific soft feature masks with an overlap penalty; average them at test (#75)."""

    RANGES: ClassVar[Ranges] = {"dmg_lambda": ("log10", -2, 0)}

    def __init__(self, params: DMGParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        self.envs = require_envs(info, "dmg")

    def wrap(self, model: nn.Module) -> nn.Module:
        check_features(model)
        p = next(model.parameters())
        return MaskedModel(model, self.envs).to(p.dtype)

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        xs, ys = zip(*batches.values(), strict=True)
        feats = model.featurize(torch.cat(xs)).split([len(y) for y in ys])
        nll = torch.stack([
            cross_entropy(model.env_logits(f, model.envs.index(name)), y)
            for name, f, y in zip(batches, feats, ys, strict=True)
        ]).mean()  # fmt: skip
        m, k = model.masks(), len(model.envs)
        penalty = torch.stack(
            [soft_iou(m[i], m[j]) for i in range(k) for j in range(i + 1, k)]
        ).mean()
        return nll + self.params.dmg_lambda * penalty, {
            "nll": nll.item(),
            "overlap": penalty.item(),
        }
