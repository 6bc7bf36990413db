"""DMG: domain-specific masks for generalization (Chattopadhyay, Balaji & Hoffman, ECCV 2020, #75).

One mask over the penultimate features per training environment, with probabilities
``m_e = sigmoid(logits_e)``. Env ``e``'s batch is classified from ``f * m_e``; a penalty on the soft
IoU of every pair of masks, ``sum(m_i m_j) / sum(m_i + m_j - m_i m_j)``, weighted by
``dmg_lambda``, keeps them apart. Two modes:

- ``masks="soft"`` (the default): the masks are the probabilities themselves, their logits start
  at 0; on any input outside training (evaluation) the prediction averages the softmax over all
  masks.
- ``masks="sampled"``: the official code's rules (``prithv1/DMG``, ``models/supermasks.py`` and
  ``trainers/subnetwork_supermask_trainer.py``): in training each example gets a hard Bernoulli
  mask sampled from ``m_e`` with a straight-through gradient, the logits start uniform in [0, 1)
  (``random_uniform``); at evaluation the soft masks ``m_e`` scale the features and the *logits*
  are averaged over the masks (the code's ``softscale`` test rule).

Differences from the code in both modes: one masked layer (the penultimate features; the code's
AlexNet config masks the inputs of all three classifier layers), and the in-domain validation
prediction is the same average over masks (the code scores each source domain's validation set
with that domain's own hard mask).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.methods.dg_shared import Ranges, check_features, classifier, featurize, require_envs
from genlab.registry import Params


class DMGParams(Params):
    """Params of ``dmg``."""

    dmg_lambda: float = Field(0.1, ge=0, description="weight of the mask-overlap penalty")
    masks: Literal["soft", "sampled"] = Field(
        "soft", description="soft masks, or the official code's sampled hard masks (see module)"
    )
    quiet_defaults = {"masks": "soft"}  # soft-mask runs keep their run ids


def soft_iou(a: Tensor, b: Tensor) -> Tensor:
    """``sum(a b) / sum(a + b - a b)`` for masks in [0, 1]."""
    inter = (a * b).sum()
    return inter / (a.sum() + b.sum() - inter).clamp_min(1e-12)


class MaskedModel(nn.Module):
    """The backbone with one feature mask per training environment; forward averages the masks."""

    def __init__(self, base: nn.Module, envs: list[str], sampled: bool = False) -> None:
        super().__init__()
        self.base, self.envs, self.sampled = base, list(envs), sampled
        self.classifier = classifier(base)
        d = self.classifier.in_features
        init = torch.rand(len(envs), d) if sampled else torch.zeros(len(envs), d)
        self.mask_logits = nn.Parameter(init)

    def masks(self) -> Tensor:
        return torch.sigmoid(self.mask_logits)

    def featurize(self, x: Tensor) -> Tensor:
        return featurize(self.base, x)

    def env_logits(self, feats: Tensor, env: int, sample: bool = False) -> Tensor:
        m = self.masks()[env]
        if sample:  # a hard Bernoulli mask per example, straight-through to the probabilities
            m = m.expand_as(feats)
            m = (torch.bernoulli(m.detach()) - m).detach() + m
        return self.classifier(feats * m)

    def forward(self, x: Tensor) -> Tensor:
        f = self.featurize(x)
        logits = torch.stack([self.env_logits(f, e) for e in range(len(self.envs))])
        if self.sampled:  # the code's test rule: the logits averaged over the soft masks
            return logits.mean(0)
        return logits.softmax(-1).mean(0).clamp_min(1e-12).log()


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
        return MaskedModel(model, self.envs, self.params.masks == "sampled").to(p.dtype)

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        xs, ys = zip(*batches.values(), strict=True)
        feats = model.featurize(torch.cat(xs)).split([len(y) for y in ys])
        nll = torch.stack(
            [
                cross_entropy(model.env_logits(f, model.envs.index(name), model.sampled), y)
                for name, f, y in zip(batches, feats, ys, strict=True)
            ]
        ).mean()
        m, k = model.masks(), len(model.envs)
        penalty = torch.stack(
            [soft_iou(m[i], m[j]) for i in range(k) for j in range(i + 1, k)]
        ).mean()
        return nll + self.params.dmg_lambda * penalty, {
            "nll": nll.item(),
            "overlap": penalty.item(),
        }
