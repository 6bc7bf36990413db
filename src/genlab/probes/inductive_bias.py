"""Inductive bias needed to generalize, from sampled hypotheses (Boopathy et al., #45 and #43).

#45 ("Towards Exact Computation of Inductive Bias", IJCAI 2024): sample hypotheses from a
hypothesis space, keep those that fit the training data, and estimate the information needed to
pick a well-generalizing one, ``-log2 P(test loss <= ε | fits the training data)`` bits. #43
("Model-agnostic Measure of Generalization Difficulty", ICML 2023): that information grows with
the intrinsic dimension of the data.

- ``inductive_bias_bits``: the estimator, for any ``sampler(rng) -> (train_loss, test_loss)``.
  The probability is the empirical fraction when at least ``min_hits`` sampled hypotheses reach
  ``ε``; otherwise (the tail is too thin to count) it is extrapolated from a normal fit to the
  test losses of the fitting hypotheses (``scipy.stats.norm.logcdf``), as #45 models the loss
  distribution parametrically; ``method`` says which.
- ``random_feature_sampler``: hypotheses ``sign(w · relu(A x + b))`` with random ``A, b``
  (Gaussian, one draw per hypothesis; ``A``'s scale set by the training inputs' mean squared
  norm, so a rotation of the data into more ambient dimensions leaves the class unchanged) and
  ``w`` the minimum-norm interpolant of the ±1 training labels, so every hypothesis with
  ``width >= n_train`` fits the training data.
- ``intrinsic_dim_task``: binary labels on data with a chosen intrinsic dimension ``d`` in an
  ambient space of dimension ``D`` (``x = Q z``, ``z ~ N(0, I_d)``, ``Q`` orthonormal;
  ``y = sign(Σ_k sin(u_kᵀ z))`` with random unit ``u_k``), the synthetic tasks of #43's trend.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from pydantic import Field
from scipy.stats import norm
from torch import nn

from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import Params

Sampler = Callable[[np.random.Generator], tuple[float, float]]


@dataclass
class InductiveBias:
    """The estimate: ``bits`` = ``-log2 p``; ``fitting`` of ``sampled`` hypotheses fit the
    training data and ``hits`` of those reach test loss ``<= epsilon``."""

    bits: float
    p: float
    hits: int
    fitting: int
    sampled: int
    method: str
    mean_test_loss: float


def inductive_bias_bits(
    sampler: Sampler,
    samples: int,
    epsilon: float,
    fit_tol: float = 0.0,
    min_hits: int = 10,
    seed: int = 0,
) -> InductiveBias:
    """Estimate ``-log2 P(test <= epsilon | train <= fit_tol)`` from ``samples`` hypotheses."""
    if samples < 2:
        raise ValueError("samples: need >= 2 hypotheses")
    rng = np.random.default_rng(seed)
    pairs = np.array([sampler(rng) for _ in range(samples)], dtype=float)
    test = pairs[pairs[:, 0] <= fit_tol, 1]
    if len(test) < 2:
        raise ValueError(
            f"only {len(test)} of {samples} sampled hypotheses fit the training data "
            f"(train loss <= fit_tol={fit_tol}); sample more or raise fit_tol"
        )
    hits = int((test <= epsilon).sum())
    if hits >= min_hits:
        log_p, method = math.log(hits / len(test)), "empirical"
    else:
        sd = max(float(test.std(ddof=1)), 1e-12)
        log_p, method = float(norm.logcdf((epsilon - test.mean()) / sd)), "normal-tail"
    return InductiveBias(
        bits=-log_p / math.log(2),
        p=math.exp(log_p),
        hits=hits,
        fitting=len(test),
        sampled=samples,
        method=method,
        mean_test_loss=float(test.mean()),
    )


def random_feature_sampler(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    width: int = 256,
    scale: float = 1.0,
) -> Sampler:
    """Sampler of random-feature classifiers interpolating ±1 labels; losses are 0-1 errors."""
    t_train, t_test = np.where(y_train > 0, 1.0, -1.0), np.where(y_test > 0, 1.0, -1.0)
    d = x_train.shape[1]
    norm = math.sqrt(max(float((x_train**2).sum(1).mean()), 1e-12))

    def sample(rng: np.random.Generator) -> tuple[float, float]:
        a = rng.standard_normal((d, width)) * scale / norm
        b = rng.standard_normal(width) * scale
        f_train = np.maximum(x_train @ a + b, 0)
        w = np.linalg.lstsq(f_train, t_train, rcond=None)[0]
        train = float(np.mean(np.sign(f_train @ w) != t_train))
        test = float(np.mean(np.sign(np.maximum(x_test @ a + b, 0) @ w) != t_test))
        return train, test

    return sample


def intrinsic_dim_task(
    intrinsic_dim: int,
    ambient_dim: int,
    n_train: int,
    n_test: int,
    seed: int = 0,
    waves: int = 3,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(x_train, y_train, x_test, y_test)`` of the intrinsic-dimension task (module docstring);
    labels in {0, 1}."""
    if not 1 <= intrinsic_dim <= ambient_dim:
        raise ValueError(
            f"intrinsic_dim: must be in [1, ambient_dim={ambient_dim}], got {intrinsic_dim}"
        )
    rng = np.random.default_rng(seed)
    q = np.linalg.qr(rng.standard_normal((ambient_dim, intrinsic_dim)))[0]
    u = rng.standard_normal((waves, intrinsic_dim))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    z = rng.standard_normal((n_train + n_test, intrinsic_dim))
    y = (np.sin(2 * z @ u.T).sum(1) > 0).astype(int)
    x = z @ q.T
    return x[:n_train], y[:n_train], x[n_train:], y[n_train:]


# ---- the probe ---------------------------------------------------------------------------------


class InductiveBiasParams(Params):
    """Params of ``inductive_bias``."""

    hypotheses: int = Field(200, ge=2, le=100_000, description="hypotheses sampled")
    width: int = Field(128, ge=1, le=100_000, description="random features per hypothesis")
    epsilon: float = Field(0.1, gt=0, lt=1, description="test error a good hypothesis reaches")
    min_hits: int = Field(10, ge=1, description="hits below which the tail is extrapolated")
    scale: float = Field(1.0, gt=0, description="feature weight scale")


@PROBES.register(
    "inductive_bias",
    InductiveBiasParams,
    papers=(45, 43),
    family="diag",
    tiny={"hypotheses": 4, "width": 64},
)
def inductive_bias(model: nn.Module, ctx: EvalContext, params: InductiveBiasParams) -> ProbeResult:
    """Bits of inductive bias needed to generalize on the task's data, from sampled random-feature
    hypotheses fitted to the training split (Boopathy et al., #45, #43); the model is not used.
    Metrics per ``test/*`` split: ``inductive_bias_bits``, ``fit_share`` (hypotheses that fit
    the training data) and ``hypothesis_error`` (their mean test error). Binary tasks only.
    Params: ``hypotheses``, ``width``, ``epsilon``, ``min_hits``, ``scale``."""
    if ctx.data.info.kind != "classification" or ctx.data.info.n_outputs != 2:
        raise SpecError("inductive_bias needs a binary classification task (e.g. intrinsic_dim)")
    train = next(iter(ctx.data.train.values()))
    out: ProbeResult = {}
    for name, split in ctx.data.test.items():
        xs = [s.x.flatten(1).double().numpy() for s in (train, split)]
        sampler = random_feature_sampler(
            xs[0], train.y.numpy(), xs[1], split.y.numpy(), params.width, params.scale
        )
        try:
            r = inductive_bias_bits(
                sampler,
                params.hypotheses,
                params.epsilon,
                min_hits=params.min_hits,
                seed=ctx.step + 45,
            )
            bits, share, err = r.bits, r.fitting / r.sampled, r.mean_test_loss
        except ValueError:  # fewer than two hypotheses fit the training data
            bits, share, err = math.nan, 0.0, math.nan
        out |= {
            (f"test/{name}", "inductive_bias_bits"): float(bits),
            (f"test/{name}", "fit_share"): float(share),
            (f"test/{name}", "hypothesis_error"): float(err),
        }
    return out
