"""RIDG: domain generalization via rationale invariance (Chen et al., ICCV 2023, #8).

A sample's rationale is the matrix of each penultimate feature's contribution to each logit,
``R[k, j] = W[k, j] * f[j]``. RIDG keeps a momentum-updated mean rationale per class (a model
buffer) and adds ``ridg_reg * mean_i ||R_i - Rbar_{y_i}||^2`` to the pooled cross-entropy, so that
samples of a class rely on the same features in the same way whatever their environment.
Defaults here are ours (the paper tunes per dataset): ``ridg_reg = 0.01``, ``momentum = 0.1``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.methods.dg_shared import Ranges, buffer, check_features, classifier, featurize, pooled
from genlab.registry import Params


class RIDGParams(Params):
    """Params of ``ridg``."""

    ridg_reg: float = Field(0.01, ge=0, description="weight of the rationale-invariance penalty")
    momentum: float = Field(0.1, gt=0, le=1, description="weight of the batch in the class means")


def rationales(feats: Tensor, weight: Tensor) -> Tensor:
    """``(N, C, D)``: ``R[n, k, j] = weight[k, j] * feats[n, j]``."""
    return feats[:, None, :] * weight[None, :, :]


@METHODS.register("ridg", RIDGParams, papers=(8,), family="domain-generalization")
class RIDG(Method):
    """Rationale invariance: pull each sample's rationale to its class's running mean (#8)."""

    RANGES: ClassVar[Ranges] = {"ridg_reg": ("log10", -3, 0), "momentum": ("uniform", 0.01, 0.5)}

    def wrap(self, model: nn.Module) -> nn.Module:
        check_features(model)
        w = classifier(model).weight
        buffer(model, "dg_ridg_bank", torch.zeros(w.shape[0], *w.shape, dtype=w.dtype))
        buffer(model, "dg_ridg_seen", torch.zeros(w.shape[0], dtype=torch.bool))
        return model

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x, y, _ = pooled(batches)
        head = classifier(model)
        feats = featurize(model, x)
        nll = cross_entropy(head(feats), y)
        r = rationales(feats, head.weight)
        bank, seen, m = model.dg_ridg_bank, model.dg_ridg_seen, self.params.momentum
        with torch.no_grad():
            for c in y.unique():
                mean = r[y == c].mean(0)
                bank[c] = (1 - m) * bank[c] + m * mean if seen[c] else mean
                seen[c] = True
        penalty = (r - bank[y]).pow(2).sum(dim=(1, 2)).mean()
        return nll + self.params.ridg_reg * penalty, {"nll": nll.item(), "penalty": penalty.item()}
