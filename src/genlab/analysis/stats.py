"""Summary statistics over seeds: mean, standard deviation and a Student-t confidence interval."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def mean_ci(values: Sequence[float], confidence: float = 0.95) -> dict[str, float]:
    """``mean``, ``std`` (ddof=1), ``ci_lo``, ``ci_hi`` (Student t over seeds) and ``n``.

    NaNs are dropped; with fewer than two values the interval is undefined (NaN).
    """
    v = np.asarray([x for x in values if x is not None and not math.isnan(x)], dtype=float)
    n = len(v)
    if n == 0:
        return {"mean": math.nan, "std": math.nan, "ci_lo": math.nan, "ci_hi": math.nan, "n": 0}
    mean = float(v.mean())
    if n < 2:
        return {"mean": mean, "std": math.nan, "ci_lo": math.nan, "ci_hi": math.nan, "n": 1}
    from scipy import stats  # lazy: scipy.stats takes seconds to import

    std = float(v.std(ddof=1))
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * std / math.sqrt(n)
    return {"mean": mean, "std": std, "ci_lo": mean - half, "ci_hi": mean + half, "n": n}
