"""Feature-distribution matching across environments: MMD (Li et al., 2018) with a mixture of
Gaussian kernels, and Deep CORAL (Sun & Saenko, 2016) matching means and covariances, as in
DomainBed: ``mean_e CE_e + mmd_gamma * mean_{e<e'} D(f_e, f_e')``. Need >= 2 training envs.
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
from genlab.methods.dg_shared import (
    Ranges,
    check_features,
    classifier,
    featurize,
    pooled,
    require_envs,
)
from genlab.registry import Params

GAMMAS = (0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)


class MMDParams(Params):
    """Params of ``mmd`` and ``coral`` (DomainBed default)."""

    mmd_gamma: float = Field(1.0, ge=0, description="weight of the matching penalty")


def gaussian_kernel(a: Tensor, b: Tensor, gammas: tuple[float, ...] = GAMMAS) -> Tensor:
    """``sum_g exp(-g * ||a_i - b_j||^2)``."""
    d = torch.cdist(a, b).pow(2)
    return sum(torch.exp(-g * d) for g in gammas)


def mmd_distance(a: Tensor, b: Tensor) -> Tensor:
    """Squared MMD with the Gaussian mixture kernel (biased estimator, as DomainBed)."""
    return (
        gaussian_kernel(a, a).mean()
        + gaussian_kernel(b, b).mean()
        - 2 * gaussian_kernel(a, b).mean()
    )


def coral_distance(a: Tensor, b: Tensor) -> Tensor:
    """Mean squared difference of the means plus that of the (unbiased) covariances."""
    ma, mb = a.mean(0, keepdim=True), b.mean(0, keepdim=True)
    ca, cb = a - ma, b - mb
    cov_a, cov_b = ca.T @ ca / (len(a) - 1), cb.T @ cb / (len(b) - 1)
    return (ma - mb).pow(2).mean() + (cov_a - cov_b).pow(2).mean()


class _Matching(Method):
    distance = staticmethod(mmd_distance)
    RANGES: ClassVar[Ranges] = {"mmd_gamma": ("log10", -1, 1)}

    def __init__(self, params: MMDParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        require_envs(info, type(self).__name__.lower())

    def wrap(self, model: nn.Module) -> nn.Module:
        check_features(model)
        return model

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x, y, sizes = pooled(batches)
        feats = featurize(model, x)
        logits = classifier(model)(feats)
        fs, ls, ys = feats.split(sizes), logits.split(sizes), y.split(sizes)
        nll = torch.stack([cross_entropy(lo, t) for lo, t in zip(ls, ys, strict=True)]).mean()
        k = len(fs)
        pen = torch.stack([self.distance(fs[i], fs[j]) for i in range(k) for j in range(i + 1, k)])
        penalty = pen.mean()
        return nll + self.params.mmd_gamma * penalty, {"nll": nll.item(), "penalty": penalty.item()}


@METHODS.register("mmd", MMDParams, papers=(), family="domain-generalization")
class MMD(_Matching):
    """Match penultimate features across envs by MMD with Gaussian kernels (Li et al., 2018)."""

    distance = staticmethod(mmd_distance)


@METHODS.register("coral", MMDParams, papers=(), family="domain-generalization")
class CORAL(_Matching):
    """Match feature means and covariances across envs (Deep CORAL, Sun & Saenko, 2016)."""

    distance = staticmethod(coral_distance)
