"""Representation distillation from an OOD-robust teacher (Zhang et al., feature contamination,
#76).

The teacher's representation is ``t(x) = ReLU([x_core, -x_core])``: it reads the core features
only (``info.extra["core_dims"]``, given by ``structured_features``), so it is unaffected by any
background shift. The student (the run's model, e.g. a two-layer ReLU ``mlp``) fits it through a
learned linear map ``A``: ``mean ||A h(x) - t(x)||^2``, with ``h`` its penultimate features. Its
classifier is a linear probe trained on ``h`` detached (it never shapes the representation):

    loss = distill_weight * MSE(A h(x), t(x)) + CE(head(h(x).detach()), y)
"""

from __future__ import annotations

from typing import Any

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.methods.dg_shared import check_features, classifier, featurize, pooled
from genlab.registry import Params


class DistillParams(Params):
    """Params of ``repr_distill``."""

    distill_weight: float = Field(1.0, gt=0, description="weight of the representation MSE")


def core_teacher(x: Tensor, core_dims: int) -> Tensor:
    """``ReLU([x_core, -x_core])``: a representation of the core features alone."""
    core = x[:, :core_dims]
    return torch.relu(torch.cat([core, -core], dim=1))


class DistillModel(nn.Module):
    """The student and the linear map from its features to the teacher's representation."""

    def __init__(self, student: nn.Module, core_dims: int) -> None:
        super().__init__()
        self.student = student
        self.classifier = classifier(student)
        self.to_teacher = nn.Linear(self.classifier.in_features, 2 * core_dims)

    def featurize(self, x: Tensor) -> Tensor:
        return featurize(self.student, x)

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.featurize(x))


@METHODS.register("repr_distill", DistillParams, papers=(76,), family="domain-generalization")
class ReprDistill(Method):
    """Fit a core-only teacher's representation; a detached linear probe classifies (#76)."""

    def __init__(self, params: DistillParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        if "core_dims" not in info.extra:
            raise ValueError(
                "method 'repr_distill' needs a task that names its core features "
                "(info.extra['core_dims'], e.g. structured_features)"
            )
        self.core_dims = int(info.extra["core_dims"])

    def wrap(self, model: nn.Module) -> nn.Module:
        check_features(model)
        p = next(model.parameters())
        return DistillModel(model, self.core_dims).to(p.dtype)

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x, y, _ = pooled(batches)
        h = model.featurize(x)
        target = core_teacher(x, self.core_dims)
        mse = (model.to_teacher(h) - target).pow(2).mean()
        ce = cross_entropy(model.classifier(h.detach()), y)
        r2 = 1 - mse.detach() / target.var(dim=0, unbiased=False).mean().clamp_min(1e-12)
        return self.params.distill_weight * mse + ce, {"mse": mse.item(), "r2": r2.item()}
