"""Inter-domain Mixup (Yan et al., 2020; Wang et al., 2020), as in DomainBed: random pairs of
environments, inputs mixed with ``lam ~ Beta(mixup_alpha, mixup_alpha)``, the loss mixed with the
same ``lam``. Randomness comes from torch's global RNG, seeded by the run's ``seed``.
Needs >= 2 training environments.
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
from genlab.methods.dg_shared import Ranges, require_envs
from genlab.registry import Params


class MixupParams(Params):
    """Params of ``mixup`` (DomainBed default)."""

    mixup_alpha: float = Field(0.2, gt=0, description="Beta(alpha, alpha) mixing weights")


def random_pairs(n: int) -> list[tuple[int, int]]:
    """DomainBed's ``random_pairs_of_minibatches``: a random cycle over the environments."""
    perm = torch.randperm(n).tolist()
    return [(perm[i], perm[(i + 1) % n]) for i in range(n)]


def mixup_loss(model: nn.Module, a: Batch, b: Batch, lam: float) -> Tensor:
    """``lam * CE(f(x), y_a) + (1 - lam) * CE(f(x), y_b)`` with ``x = lam x_a + (1 - lam) x_b``."""
    n = min(len(a[1]), len(b[1]))
    x = lam * a[0][:n] + (1 - lam) * b[0][:n]
    logits = model(x)
    return lam * cross_entropy(logits, a[1][:n]) + (1 - lam) * cross_entropy(logits, b[1][:n])


@METHODS.register("mixup", MixupParams, papers=(), family="domain-generalization")
class Mixup(Method):
    """Inter-domain Mixup of inputs and labels across random pairs of environments."""

    RANGES: ClassVar[Ranges] = {"mixup_alpha": ("log10", -1, 1)}

    def __init__(self, params: MixupParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        require_envs(info, "mixup")

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        envs = list(batches.values())
        alpha = self.params.mixup_alpha
        beta = torch.distributions.Beta(torch.tensor(alpha), torch.tensor(alpha))
        total = torch.zeros(())
        for i, j in random_pairs(len(envs)):
            total = total + mixup_loss(model, envs[i], envs[j], float(beta.sample()))
        return total / len(envs), {}
