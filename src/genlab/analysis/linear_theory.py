"""The grokking time of a linear student (Levi, Beck & Bar-Sinai, "Grokking in linear estimators",
catalogue #53), in the discrete-GD form derived in ``docs/grokking.md``.

Setup: ``y = T x``, ``x ~ N(0, I_d)``, ``T_ij ~ N(0, 1/d)``, ``N = r d`` training samples, a linear
student ``S`` from ``S_0`` (i.i.d. ``N(0, s²/d)``) trained by full-batch GD with step ``η`` and
weight decay ``γ`` on ``(1/2N) Σ |S x - y|²``; a test sample is right when ``|(S-T)x|²/d_out <= ε``.
In each eigendirection of the empirical covariance (eigenvalue ``μ``, Marchenko-Pastur with ratio
``λ = d/N``), ``r = 1 - η(μ+γ)``, and the test error relative to the teacher's output power is

    g(t) = ∫ ρ_MP(μ; λ) [ (γ/(μ+γ)) (1 - r^t) + r^t ]² + s² r^{2t} dμ.

With ``d_out`` outputs, ``|(S-T)x|²/d_out ≈ g(t) χ²_{d_out}/d_out``, so the accuracy crosses 50% at
the first ``t`` with ``g(t) <= ε d_out / median(χ²_{d_out})``: the predicted grokking step.
Assumptions (checked, else ``SpecError``): ``N > d``, ``d >= 50``, stable monotone GD
``η ((1+√λ)² + γ) < 1``, and a threshold the error can reach (``g(∞) < target``).
"""

from __future__ import annotations

import math
from functools import lru_cache

from scipy import integrate, stats

from genlab.errors import SpecError


def relative_error(t: float, lam: float, lr: float, wd: float, init_scale: float) -> float:
    """``g(t)``: the predicted test error relative to the teacher's output power (module doc)."""
    lo, hi = (1 - math.sqrt(lam)) ** 2, (1 + math.sqrt(lam)) ** 2

    def integrand(mu: float) -> float:
        rho = math.sqrt(max((hi - mu) * (mu - lo), 0.0)) / (2 * math.pi * lam * mu)
        r = 1 - lr * (mu + wd)
        a = wd / (mu + wd)
        return rho * ((a * (1 - r**t) + r**t) ** 2 + init_scale**2 * r ** (2 * t))

    return integrate.quad(integrand, lo, hi, limit=200)[0]


def target_error(epsilon: float, d_out: int) -> float:
    """The relative error at which half the test samples fall under the threshold."""
    return epsilon * d_out / stats.chi2.median(d_out)


@lru_cache(maxsize=256)
def predicted_grokking_step(
    d_in: int,
    d_out: int,
    ratio: float,
    lr: float,
    wd: float,
    epsilon: float,
    init_scale: float = 0.0,
) -> int:
    """First GD step at which the predicted thresholded test accuracy reaches 50% (module doc).

    Raises ``SpecError`` when the configuration is outside the formula's assumptions."""
    lam = 1 / ratio
    if ratio <= 1:
        raise SpecError(f"sample ratio: the prediction needs N > d_in (ratio > 1), got {ratio}")
    if d_in < 50:
        raise SpecError(f"d_in: the Marchenko-Pastur limit needs d_in >= 50, got {d_in}")
    bound = 1 / ((1 + math.sqrt(lam)) ** 2 + wd)
    if lr >= bound:
        raise SpecError(
            f"lr: GD must be stable and monotone, lr * ((1+sqrt(d_in/N))² + wd) < 1; "
            f"got lr={lr}, ratio={ratio}, wd={wd} (use lr < {bound:.3g})"
        )
    target = target_error(epsilon, d_out)
    if relative_error(1e9, lam, lr, wd, init_scale) >= target:
        raise SpecError(
            f"weight decay: with wd={wd} and ratio={ratio} the test error never falls "
            f"to the threshold (epsilon={epsilon}); the grokking time is infinite"
        )
    hi = 1
    while relative_error(hi, lam, lr, wd, init_scale) > target:
        hi *= 2
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if relative_error(mid, lam, lr, wd, init_scale) > target else (lo, mid)
    return hi
