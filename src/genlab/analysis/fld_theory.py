"""The closed-form Monte Carlo of De Silva et al.'s analysis ("The Value of Out-of-Distribution
Data", ICML 2023, #47): Fisher's linear discriminant (shared covariance known to be the identity)
fitted on a weighted mix of ``n`` target and ``m`` OOD samples of two Gaussians, scored by its
exact target error ``(Phi(-(w.mu + b)/|w|) + Phi(-(w.mu - b)/|w|)) / 2``. The task is
``genlab.tasks.ood_two_gaussians``; the probe ``fld_risk`` brings these numbers to the store."""

from __future__ import annotations

import math

import numpy as np


def means(d: int, separation: float, theta_deg: float) -> tuple[np.ndarray, np.ndarray]:
    """Target mean ``mu = separation * e_1`` and the OOD mean ``R_theta mu``."""
    mu = np.zeros(d)
    mu[0] = separation
    t = math.radians(theta_deg)
    nu = np.zeros(d)
    nu[0], nu[1] = separation * math.cos(t), separation * math.sin(t)
    return mu, nu


def fld_target_error(
    n: int,
    m: int,
    d: int,
    separation: float,
    theta_deg: float,
    alpha: float | None,
    draws: int,
    rng: np.random.Generator,
) -> np.ndarray:
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
