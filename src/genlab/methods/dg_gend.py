"""GenD: LayerNorm-only fine-tuning on a hypersphere (Yermakov, Cech, Matas & Fritz 2025,
"Deepfake detection that generalizes across benchmarks", catalogue #118).

``wrap`` freezes every parameter of a (pre-trained) model except those of its ``nn.LayerNorm``
layers and its linear classifier (``tune="layernorm"``; ``"all"`` keeps everything trainable);
with ``l2=True`` the classifier reads the L2-normalised features (the official code's
``LinearNorm`` head: ``linear(x / ||x||)``, times ``scale``). The loss is cross-entropy plus the
label-aware alignment loss (mean squared distance of same-class unit features) and the uniformity
loss (``log mean exp(-2 ||z_i - z_j||^2)``) of Wang & Isola (2020), weighted ``align`` and
``uniform`` (the official code's GenD runs: CE 1.0, uniformity 0.5, alignment 0.1; defaults here).

Params: ``tune`` (``layernorm`` | ``all``), ``l2``, ``scale``, ``align``, ``uniform``.
"""

from __future__ import annotations

from typing import Any, Literal

import torch
import torch.nn.functional as F
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.methods.dg_shared import check_features, classifier, featurize, pooled
from genlab.registry import Params


class GenDParams(Params):
    """Params of ``gend``."""

    tune: Literal["layernorm", "all"] = Field(
        "layernorm", description="train the LayerNorm parameters and the classifier, or all"
    )
    l2: bool = Field(True, description="classifier on L2-normalised features")
    scale: float = Field(1.0, gt=0, le=100, description="multiplies the unit features (l2 only)")
    align: float = Field(0.1, ge=0, description="weight of the label-aware alignment loss")
    uniform: float = Field(0.5, ge=0, description="weight of the uniformity loss")


def alignment(z: Tensor, y: Tensor) -> Tensor:
    """Mean squared distance between unit features of the same class (0 without such pairs)."""
    same = (y[:, None] == y[None, :]).triu(diagonal=1)
    i, j = same.nonzero(as_tuple=True)
    if len(i) == 0:
        return z.sum() * 0.0
    return (z[i] - z[j]).pow(2).sum(dim=1).mean()


def uniformity(z: Tensor, t: float = 2.0) -> Tensor:
    """``log mean_{i<j} exp(-t ||z_i - z_j||^2)`` (Wang & Isola 2020), clamped at 1e-6."""
    if len(z) < 2:
        return z.sum() * 0.0
    return torch.pdist(z).pow(2).mul(-t).exp().mean().clamp(min=1e-6).log()


class GenDModel(nn.Module):
    """A model whose classifier reads (optionally L2-normalised, scaled) features."""

    def __init__(self, base: nn.Module, l2: bool, scale: float) -> None:
        super().__init__()
        self.base, self.l2, self.scale = base, l2, scale
        self.classifier = classifier(base)

    def unit_features(self, x: Tensor) -> Tensor:
        return F.normalize(featurize(self.base, x), dim=1)

    def logits(self, feats: Tensor) -> Tensor:
        z = self.scale * F.normalize(feats, dim=1) if self.l2 else feats
        return self.classifier(z)

    def featurize(self, x: Tensor) -> Tensor:
        return featurize(self.base, x)

    def forward(self, x: Tensor) -> Tensor:
        return self.logits(self.featurize(x))


@METHODS.register("gend", GenDParams, papers=(118,), family="domain-generalization")
class GenD(Method):
    """LayerNorm-only fine-tuning, L2-normalised features, alignment + uniformity losses (#118)."""

    def __init__(self, params: GenDParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        if info.kind != "classification":
            raise ValueError(f"method gend needs a classification task, got a {info.kind} task")

    def wrap(self, model: nn.Module) -> nn.Module:
        check_features(model)
        p = self.params
        if p.tune == "layernorm":
            norms = [m for m in model.modules() if isinstance(m, nn.LayerNorm)]
            if not any(q.numel() for m in norms for q in m.parameters()):
                raise ValueError(
                    f"method.params.tune: 'layernorm' needs a model with affine "
                    f"LayerNorm layers (e.g. vit_tiny); {type(model).__name__} "
                    "has none"
                )
            keep = {id(q) for m in norms for q in m.parameters()}
            keep |= {id(q) for q in classifier(model).parameters()}
            for q in model.parameters():
                q.requires_grad_(id(q) in keep)
        dtype = next(model.parameters()).dtype
        return GenDModel(model, p.l2, p.scale).to(dtype)

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x, y, _ = pooled(batches)
        feats = model.featurize(x)
        ce = cross_entropy(model.logits(feats), y)
        z = F.normalize(feats, dim=1)
        a, u = alignment(z, y), uniformity(z)
        p = self.params
        return ce + p.align * a + p.uniform * u, {
            "ce": ce.item(),
            "align": a.item(),
            "uniform": u.item(),
        }


def trainable_share(model: nn.Module) -> float:
    """The share of ``model``'s parameters that require grads."""
    total = sum(q.numel() for q in model.parameters())
    return sum(q.numel() for q in model.parameters() if q.requires_grad) / max(total, 1)
