"""Two-Gaussian target and OOD tasks with Fisher's linear discriminant (De Silva et al., "The Value
of Out-of-Distribution Data", ICML 2023, #47).

Target: classes ``y = ±1`` with ``x ~ N(y mu, I_d)``; OOD source: ``x ~ N(y R_theta mu, I_d)``, with
``R_theta`` a rotation by ``theta`` degrees in the plane of the first two coordinates. The task
``two_gaussian_ood`` gives ``n`` target and ``m`` OOD samples as two training environments for the
engine; ``fld_target_error`` is the closed-form Monte Carlo of the paper's analysis: the FLD (shared
covariance known to be the identity) fitted on a weighted mix of the two, scored by its exact
target error ``(Phi(-(w.mu + b)/|w|) + Phi(-(w.mu - b)/|w|)) / 2``; the probe ``fld_risk`` writes
its mean over draws to the store (the task's setting is in ``info.extra["fld"]``).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from pydantic import Field

from genlab.registry import Params
from genlab.tasks import TASKS
from genlab.tasks.base import Split, TaskData, TaskInfo


def means(d: int, separation: float, theta_deg: float) -> tuple[np.ndarray, np.ndarray]:
    """Target mean ``mu = separation * e_1`` and the OOD mean ``R_theta mu``."""
    mu = np.zeros(d)
    mu[0] = separation
    t = math.radians(theta_deg)
    nu = np.zeros(d)
    nu[0], nu[1] = separation * math.cos(t), separation * math.sin(t)
    return mu, nu


def fld_target_error(
    n: int, m: int, d: int, separation: float, theta_deg: float, alpha: float | None,
    draws: int, rng: np.random.Generator,
) -> np.ndarray:  # fmt: skip
    """Target error of the FLD over ``draws`` Monte Carlo draws of ``n`` target + ``m`` OOD samples
    (half per class). ``alpha=None`` pools the samples (plain ERM); else the class means are
    ``(1 - alpha) * target + alpha * OOD`` (the weighted objective; ignored when m = 0)."""
    from scipy.stats import norm  # lazy: scipy.stats is slow to import for every task lookup

    mu, nu = means(d, separation, theta_deg)
    half_n, half_m = max(n // 2, 1), max(m // 2, 1)

    def class_mean(center: np.ndarray, k: int) -> np.ndarray:
        return center + rng.standard_normal((draws, d)) / math.sqrt(k)

    tp, tn = class_mean(mu, half_n), class_mean(-mu, half_n)
    if m == 0:
        mp, mn = tp, tn
    else:
        op, on = class_mean(nu, half_m), class_mean(-nu, half_m)
        a = m / (n + m) if alpha is None else alpha
        mp, mn = (1 - a) * tp + a * op, (1 - a) * tn + a * on
    w = mp - mn
    b = -(w * (mp + mn)).sum(1) / 2
    wn = np.linalg.norm(w, axis=1).clip(1e-12)
    wmu = w @ mu
    return (norm.cdf(-(wmu + b) / wn) + norm.cdf(-(wmu - b) / wn)) / 2


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
    return TaskData(train, val, test, TaskInfo(
        kind="classification", n_outputs=2, input_shape=(params.d,), chance=0.5,
        extra={"envs": envs, "train_envs": envs, "test_envs": ["target"], "fld": fld}))  # fmt: skip
