"""``ghost_bn``: any model with its BatchNorm layers turned into Ghost Batch Normalization.

Hoffer, Hubara & Soudry, "Train longer, generalize better: closing the generalization gap in large
batch training of neural networks" (NeurIPS 2017, catalogue #9): in training, batch statistics are
computed over "ghost" sub-batches of ``ghost_batch`` examples instead of the whole (large) batch,
restoring the small-batch noise of BN without more updates. Each ghost batch normalises itself and
updates the running statistics in turn; evaluation uses the running statistics as usual.

Params: ``model`` (the wrapped model, e.g. ``{name = "cnn"}``) and ``ghost_batch``. The layers keep
their parameter and buffer names, so the weights are those of the plain model (soups and
``from_run`` treat a ``ghost_bn`` run as its inner model).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from pydantic import Field, field_validator
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params


class GhostBNParams(Params):
    """Params of ``ghost_bn``."""

    model: dict[str, Any] = Field(description='the model to modify, e.g. {name = "cnn"}')
    ghost_batch: int = Field(32, ge=2, description="examples per ghost batch")

    @field_validator("model")
    @classmethod
    def _inner(cls, v: dict[str, Any]) -> dict[str, Any]:
        if set(v) - {"name", "params"} or "name" not in v:
            raise ValueError("model must be a table {name = ..., params = {...}}")
        if v["name"] in ("ghost_bn", "from_run", "soup"):
            raise ValueError(f"ghost_bn cannot wrap {v['name']!r}")
        params = MODELS.params(v["name"], v.get("params", {}), "model.params.model.params")
        return {"name": v["name"], "params": params.model_dump(mode="json")}


class GhostBatchNorm(nn.modules.batchnorm._BatchNorm):
    """BatchNorm (any input rank) whose training statistics come from ghost sub-batches."""

    def __init__(self, bn: nn.modules.batchnorm._BatchNorm, ghost_batch: int) -> None:
        super().__init__(bn.num_features, bn.eps, bn.momentum, bn.affine, bn.track_running_stats)
        self.load_state_dict(bn.state_dict())
        self.ghost_batch = ghost_batch

    def _check_input_dim(self, x: Tensor) -> None:
        if x.dim() < 2:
            raise ValueError(f"expected at least 2-D input, got {x.dim()}-D")

    def forward(self, x: Tensor) -> Tensor:
        if not self.training or len(x) <= self.ghost_batch:
            return super().forward(x)
        outs = []
        for chunk in x.split(self.ghost_batch):
            if len(chunk) < 2:  # a lone ragged example has no variance: use running stats
                outs.append(
                    F.batch_norm(
                        chunk,
                        self.running_mean,
                        self.running_var,
                        self.weight,
                        self.bias,
                        False,
                        0.0,
                        self.eps,
                    )
                )
                continue
            if self.track_running_stats:
                self.num_batches_tracked.add_(1)
            outs.append(
                F.batch_norm(
                    chunk,
                    self.running_mean,
                    self.running_var,
                    self.weight,
                    self.bias,
                    True,
                    self.momentum or 0.1,
                    self.eps,
                )
            )
        return torch.cat(outs)


def ghostify(model: nn.Module, ghost_batch: int) -> int:
    """Replace every BatchNorm of ``model`` in place; return how many were replaced."""
    count = 0
    for name, child in model.named_children():
        if isinstance(child, nn.modules.batchnorm._BatchNorm) and not isinstance(
            child, GhostBatchNorm
        ):
            setattr(model, name, GhostBatchNorm(child, ghost_batch))
            count += 1
        else:
            count += ghostify(child, ghost_batch)
    return count


TINY = {"model": {"name": "cnn", "params": {"channels": [4], "pool_every": 1}}, "ghost_batch": 8}


@MODELS.register("ghost_bn", GhostBNParams, papers=(9,), family="training-regime", tiny=TINY)
def ghost_bn(params: GhostBNParams, info: TaskInfo) -> nn.Module:
    """A model whose BatchNorm layers use ghost batches (Hoffer et al., #9)."""
    entry = MODELS.get(params.model["name"])
    model = entry.obj(entry.params.model_validate(params.model["params"]), info)
    if ghostify(model, params.ghost_batch) == 0:
        raise ValueError(f"model {params.model['name']!r} has no BatchNorm layer to ghost")
    return model
