"""Low-rank domain-factorised classifier (Li et al., "Deeper, Broader and Artier Domain
Generalization", ICCV 2017, #17).

Each training environment's classifier is a shared part plus a rank-``rank`` domain-specific part,
``W_e = W + U_e V_e^T`` (and ``b_e = b + c_e``), trained end to end on that environment's batch;
on any unseen input (evaluation) only the shared, domain-agnostic ``W, b`` are used. The paper
factorises every layer with a tensor decomposition; here the last layer only, in matrix form.
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
from genlab.methods.dg_shared import Ranges, check_features, classifier, featurize, require_envs
from genlab.registry import Params


class LowRankParams(Params):
    """Params of ``lowrank``."""

    rank: int = Field(2, ge=1, description="rank of each environment's weight offset")


class LowRankDomainModel(nn.Module):
    """The backbone, its shared head, and per-environment low-rank head offsets."""

    def __init__(self, base: nn.Module, envs: list[str], rank: int) -> None:
        super().__init__()
        self.base, self.envs = base, list(envs)
        self.classifier = classifier(base)
        c, d = self.classifier.weight.shape
        self.u = nn.Parameter(torch.zeros(len(envs), c, rank))
        self.v = nn.Parameter(torch.randn(len(envs), d, rank) / d**0.5)
        self.c = nn.Parameter(torch.zeros(len(envs), c))

    def featurize(self, x: Tensor) -> Tensor:
        return featurize(self.base, x)

    def env_logits(self, feats: Tensor, env: int) -> Tensor:
        w = self.classifier.weight + self.u[env] @ self.v[env].T
        return feats @ w.T + self.classifier.bias + self.c[env]

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.featurize(x))


@METHODS.register("lowrank", LowRankParams, papers=(17,), family="domain-generalization")
class LowRank(Method):
    """Shared + low-rank domain-specific classifier; the shared part alone at test (#17)."""

    RANGES: ClassVar[Ranges] = {"rank": ("int_log10", 0, 1)}

    def __init__(self, params: LowRankParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        self.envs = require_envs(info, "lowrank")

    def wrap(self, model: nn.Module) -> nn.Module:
        check_features(model)
        p = next(model.parameters())
        return LowRankDomainModel(model, self.envs, self.params.rank).to(p.dtype)

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        xs, ys = zip(*batches.values(), strict=True)
        feats = model.featurize(torch.cat(xs)).split([len(y) for y in ys])
        losses = [
            cross_entropy(model.env_logits(f, model.envs.index(name)), y)
            for name, f, y in zip(batches, feats, ys, strict=True)
        ]
        return torch.stack(losses).mean(), {}
