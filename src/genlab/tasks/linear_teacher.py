"""Linear teacher-student regression with Gaussian inputs (Levi, Beck & Bar-Sinai, #53).

``y = T x`` with ``x ~ N(0, I_{d_in})`` and a teacher ``T`` of i.i.d. ``N(0, 1/d_in)`` entries, so
that ``E|Tx|²/d_out = 1``. ``n_train = round(sample_ratio * d_in)`` training samples; a fresh
test set.
Everything is drawn from ``data_seed``. Targets are real vectors: ``TaskInfo.kind = "regression"``.
"""

from __future__ import annotations

import torch
from pydantic import Field

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.tasks import TASKS


class LinearTeacherParams(Params):
    """Params of ``linear_teacher``."""

    d_in: int = Field(200, ge=1, le=5000, description="input dimension")
    d_out: int = Field(20, ge=1, le=1000, description="output dimension")
    sample_ratio: float = Field(
        2.0, gt=0, le=100, description="training samples per input dimension"
    )
    n_test: int = Field(2000, ge=1, le=100_000, description="test samples")
    noise: float = Field(0.0, ge=0, description="std of Gaussian label noise on training targets")


@TASKS.register(
    "linear_teacher",
    LinearTeacherParams,
    papers=(53,),
    family="grokking",
    tiny={"d_in": 50, "d_out": 3, "n_test": 50},  # d_in >= 50: the theory's limit (#53)
)
def linear_teacher(params: LinearTeacherParams, data_seed: int) -> TaskData:
    """Gaussian inputs, targets from a random linear teacher (Levi et al., #53)."""
    gen = torch.Generator().manual_seed(data_seed)
    d_in, d_out = params.d_in, params.d_out
    n_train = max(1, round(params.sample_ratio * d_in))
    teacher = torch.randn(d_out, d_in, generator=gen, dtype=torch.float64) / d_in**0.5
    x_tr = torch.randn(n_train, d_in, generator=gen, dtype=torch.float64)
    x_te = torch.randn(params.n_test, d_in, generator=gen, dtype=torch.float64)
    y_tr = x_tr @ teacher.T + params.noise * torch.randn(
        n_train, d_out, generator=gen, dtype=torch.float64
    )
    y_te = x_te @ teacher.T
    meta = {"d_in": d_in, "d_out": d_out}
    return TaskData(
        train={"main": Split(x_tr.float(), y_tr, meta)},
        val={},
        test={"fresh": Split(x_te.float(), y_te, meta)},
        info=TaskInfo(kind="regression", n_outputs=d_out, input_shape=(d_in,)),  # type: ignore[arg-type]
    )
