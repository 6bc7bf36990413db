"""Intervals that respect [0, 1]: accuracies in reports, tables and figures.

A Student-t interval over a few seeds' accuracies can run past 0 or 1 (``0.28 [-0.14, 0.69]`` over
two seeds). For one arm's accuracy this module gives

* the **Wilson score interval** for a proportion with a known count (``successes`` of ``n``
  examples; Wilson 1927, "Probable inference, the law of succession, and statistical
  inference"), inside [0, 1] by construction;
* the **percentile bootstrap** of the mean over seeds (Efron & Tibshirani 1993, ch. 13): the
  seeds resampled with replacement, the interval between the ``(1 - c) / 2`` and ``(1 + c) / 2``
  quantiles of the resampled means; it lies between the smallest and the largest seed, so inside
  the range of any bounded measure. With few seeds it is narrower than the t interval (two seeds
  give their two values), so the reports say which interval they show.

Paired differences (method minus baseline, per seed) keep their Student-t intervals
(``genlab.analysis.compare``), and nothing a claim's judge reads changes (``stats.mean_ci`` and
``aggregate.arm_summary`` stay the t interval).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

from genlab.analysis.stats import mean_ci

Interval = Literal["t", "bootstrap"]
INTERVALS: tuple[Interval, ...] = ("t", "bootstrap")
RESAMPLES = 4000  # bootstrap resamples: the interval's ends move by well under 0.001 between seeds
PROPORTIONS = ("accuracy", "token_accuracy")  # metrics that are proportions, kept in [0, 1]


def is_proportion(metric: str) -> bool:
    """Whether values of ``metric`` are proportions (an accuracy): their intervals stay in [0, 1]."""
    return metric in PROPORTIONS or metric.endswith("accuracy")


def wilson(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``successes / n`` (``successes`` may be a
    fraction of ``n``, e.g. ``accuracy * n``); ``(nan, nan)`` without examples."""
    if n <= 0:
        return math.nan, math.nan
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, n={n}], got {successes}")
    from scipy import stats  # lazy: scipy.stats takes seconds to import

    z = float(stats.norm.ppf(0.5 + confidence / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_ci(
    values: Sequence[float], confidence: float = 0.95, resamples: int = RESAMPLES, seed: int = 0
) -> dict[str, float]:
    """``mean``, ``std`` (ddof=1), ``ci_lo``, ``ci_hi`` (percentile bootstrap of the mean, seeded:
    the same values give the same interval) and ``n``, as ``stats.mean_ci`` returns them. NaNs are
    dropped; with fewer than two values the interval is undefined (NaN)."""
    v = np.asarray([x for x in values if x is not None and not math.isnan(x)], dtype=float)
    out = mean_ci([]) if len(v) == 0 else {"mean": float(v.mean()), "n": len(v)}
    if len(v) < 2:
        return {**mean_ci(v.tolist()), **out}
    means = v[np.random.default_rng(seed).integers(0, len(v), (resamples, len(v)))].mean(axis=1)
    lo, hi = np.quantile(means, [0.5 - confidence / 2, 0.5 + confidence / 2])
    return {
        "mean": float(v.mean()),
        "std": float(v.std(ddof=1)),
        "ci_lo": float(max(lo, v.min())),
        "ci_hi": float(min(hi, v.max())),
        "n": len(v),
    }


def proportion_ci(
    values: Sequence[float], counts: Sequence[int] | None = None, confidence: float = 0.95
) -> dict[str, float]:
    """One arm's interval for proportions: a single value with its example count -> Wilson;
    several values (seeds) -> percentile bootstrap of their mean. Same keys as ``mean_ci``."""
    kept = [
        (x, c)
        for x, c in zip(values, counts or [None] * len(values), strict=True)
        if x is not None and not math.isnan(x)
    ]
    if len(kept) == 1 and kept[0][1]:
        x, count = kept[0]
        lo, hi = wilson(x * count, int(count), confidence)
        return {"mean": float(x), "std": math.nan, "ci_lo": lo, "ci_hi": hi, "n": 1}
    return bootstrap_ci([x for x, _ in kept], confidence)


def interval(
    values: Sequence[float], how: Interval = "t", confidence: float = 0.95
) -> dict[str, float]:
    """The mean over ``values`` with its interval: ``t`` (Student t, ``stats.mean_ci``) or
    ``bootstrap`` (percentile bootstrap, inside the values' range)."""
    if how == "t":
        return mean_ci(values, confidence)
    if how == "bootstrap":
        return bootstrap_ci(values, confidence)
    raise ValueError(f"interval must be one of {', '.join(INTERVALS)}, got {how!r}")


def describe(how: Interval, confidence: float = 0.95) -> str:
    """How a report names the interval it shows."""
    level = f"{confidence:.0%}"
    return {
        "t": f"{level} Student-t confidence intervals over seeds",
        "bootstrap": f"{level} percentile-bootstrap intervals over seeds (they stay within the "
        "seeds' range, so inside [0, 1] for accuracies)",
    }[how]


__all__ = [
    "INTERVALS",
    "Interval",
    "bootstrap_ci",
    "describe",
    "interval",
    "is_proportion",
    "proportion_ci",
    "wilson",
]
