"""A linear student ``y = S x`` (no bias) for teacher-student regression (Levi et al., #53)."""

from __future__ import annotations

import math

import torch
from pydantic import Field
from torch import nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params


class LinearStudentParams(Params):
    """Params of ``linear_student``."""

    init_scale: float = Field(0.0, ge=0, description="weights start i.i.d. N(0, init_scale²/d_in)")


@MODELS.register("linear_student", LinearStudentParams, papers=(53,))
def linear_student(params: LinearStudentParams, info: TaskInfo) -> nn.Module:
    """One bias-free linear layer from the flattened input to the outputs, small Gaussian init."""
    d_in = math.prod(info.input_shape) if info.input_shape else 0
    if d_in == 0 or info.kind == "sequence":
        raise ValueError(
            "linear_student needs a dense-input task with one output per input "
            "(info.input_shape; not a sequence task)"
        )
    layer = nn.Linear(d_in, info.n_outputs, bias=False)
    with torch.no_grad():
        layer.weight.normal_(
            0.0, params.init_scale / d_in**0.5
        ) if params.init_scale else layer.weight.zero_()
    return nn.Sequential(nn.Flatten(), layer)
