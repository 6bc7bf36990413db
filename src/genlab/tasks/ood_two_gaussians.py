"""Two-Gaussian target and OOD tasks with Fisher's linear discriminant (De Silva et al., "The Value
of Out-of-Distribution Data", ICML 2023, #47).

Target: classes ``y = ±1`` with ``x ~ N(y mu, I_d)``; OOD source: ``x ~ N(y R_theta mu, I_d)``, with
``R_theta`` a rotation by ``theta`` degrees in the plane of the first two coordinates. The task
``two_gaussian_ood`` gives ``n`` target and ``m`` OOD samples as two training environments for the
engine; the closed-form analysis is ``genlab.analysis.fld_theory``, and the probe ``fld_risk``
writes it to the store (the task's setting is in ``info.extra["fld"]``).
"""

from __future__ import annotations

import numpy as np
import torch
from pydantic import Field

from genlab.analysis.fld_theory import means
from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.tasks import TASKS


class TwoGaussianParams(Params):
    """Params of ``two_gaussian_ood``."""

    d: int = Field(10, ge=2, le=1000, description="dimension")
    n: int = Field(10, ge=2, description="target training samples")
    m: int = Field(100, ge=0, description="OOD training samples")
    separation: float = Field(1.0, gt=0, description="|mu|")
    theta: float = Field(45.0, ge=0, le=180, description="angle (degrees) between target and OOD")
    n_test: int = Field(2000, ge=2, description="target test samples")


def _sample(center: np.ndarray, k: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    y = torch.arange(k) % 2
    sign = (2 * y - 1).to(torch.float32)[:, None]
    x = sign * torch.tensor(center, dtype=torch.float32) + torch.randn(
        k, len(center), generator=gen
    )
    return x, y


@TASKS.register(
    "two_gaussian_ood", TwoGaussianParams, papers=(47,), family="ood", tiny={"m": 20, "n_test": 100}
)
def two_gaussian_ood(params: TwoGaussianParams, data_seed: int) -> TaskData:
    """Two-class Gaussians: ``n`` target + ``m`` rotated-mean OOD samples (De Silva et al., #47).

    Training envs ``target`` and (when m > 0) ``ood``; ``val/target`` and ``test/target`` are fresh
    target samples.
    """
    mu, nu = means(params.d, params.separation, params.theta)
    gen = torch.Generator().manual_seed(data_seed)
    train = {"target": Split(*_sample(mu, params.n, gen), {"env": "target"})}
    if params.m:
        train["ood"] = Split(*_sample(nu, params.m, gen), {"env": "ood", "theta": params.theta})
    val = {"target": Split(*_sample(mu, max(params.n_test // 4, 2), gen), {"env": "target"})}
    test = {"target": Split(*_sample(mu, params.n_test, gen), {"env": "target"})}
    envs = list(train)
    fld = params.model_dump(include={"n", "m", "d", "separation", "theta"})  # for fld_risk
    return TaskData(
        train,
        val,
        test,
        TaskInfo(
            kind="classification",
            n_outputs=2,
            input_shape=(params.d,),
            chance=0.5,
            extra={"envs": envs, "train_envs": envs, "test_envs": ["target"], "fld": fld},
        ),
    )
