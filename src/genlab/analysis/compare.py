"""Paired comparison of two methods over seeds: the mean difference with its 95% CI, an exact
sign-flip permutation test (Monte Carlo beyond 16 pairs), the Wilcoxon signed-rank test, and the
effect size d_z (mean difference over the standard deviation of the differences).

Runs are paired by seed, so both methods must share each seed's data realisation: genlab's
``data_seed`` makes that so (the pairing DomainBed argues for, Gulrajani & Lopez-Paz).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from genlab.analysis.stats import mean_ci

EXACT_MAX = 16


def sign_flip_p(diffs: np.ndarray, n_resamples: int = 20000, seed: int = 0) -> float:
    """Two-sided p of the mean difference under random sign flips (exact up to 16 pairs)."""
    d = np.asarray(diffs, dtype=float)
    n = len(d)
    if n == 0:
        return math.nan
    obs = abs(d.sum())
    if n <= EXACT_MAX:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
    else:
        signs = np.random.default_rng(seed).choice((1.0, -1.0), size=(n_resamples, n))
    sums = np.abs(signs @ d)
    return float(np.mean(sums >= obs - 1e-12))


def paired_comparison(
    frame: pd.DataFrame,
    a: str,
    b: str,
    method: str = "method",
    seed: str | Sequence[str] = "seed",
    value: str = "value",
) -> dict[str, float]:
    """Compare method ``a`` with ``b`` on ``value``, paired by ``seed`` (one column or several,
    e.g. ``["seed", "data_seed"]``; pairs missing for either are dropped). Positive ``mean_diff``
    means ``a`` scores higher."""
    index = seed if isinstance(seed, str) else list(seed)
    wide = frame[frame[method].isin([a, b])].pivot_table(index=index, columns=method, values=value)
    wide = wide.dropna()
    if a not in wide or b not in wide:
        wide = pd.DataFrame(columns=[a, b], dtype=float)
    d = (wide[a] - wide[b]).to_numpy(dtype=float)
    ci = mean_ci(d.tolist())
    sd = float(np.std(d, ddof=1)) if len(d) > 1 else math.nan
    dz = ci["mean"] / sd if sd > 0 else math.nan  # undefined when every difference is equal
    try:
        wil = float(stats.wilcoxon(d).pvalue) if len(d) and np.any(d != 0) else math.nan
    except ValueError:
        wil = math.nan
    return {
        "n": len(d),
        "mean_a": float(wide[a].mean()) if len(d) else math.nan,
        "mean_b": float(wide[b].mean()) if len(d) else math.nan,
        "mean_diff": ci["mean"],
        "ci_lo": ci["ci_lo"],
        "ci_hi": ci["ci_hi"],
        "p_permutation": sign_flip_p(d),
        "p_wilcoxon": wil,
        "cohens_dz": dz,
    }


def compare_within(
    frame: pd.DataFrame,
    block: Sequence[str],
    method: str = "method",
    pair_on: Sequence[str] = ("seed", "data_seed"),
    value: str = "value",
    reference: str | None = None,
) -> pd.DataFrame:
    """Every method against a reference inside each ``block`` (e.g. task and held-out setting),
    paired only on runs of the same block and ``pair_on`` values: never across blocks.

    The reference is ``reference`` when that method is in the block, else the block's first method
    (in ``frame`` order). One row per block and other method: the block columns, ``method``,
    ``vs`` and ``paired_comparison``'s fields."""
    block = list(block)
    rows = []
    for key, g in frame.groupby(block, sort=False) if block else [((), frame)]:
        key = key if isinstance(key, tuple) else (key,)
        methods = list(dict.fromkeys(g[method]))
        ref = reference if reference in methods else methods[0]
        for m in methods:
            if m != ref:
                r = paired_comparison(g, m, ref, method=method, seed=list(pair_on), value=value)
                rows.append({**dict(zip(block, key, strict=True)), method: m, "vs": ref, **r})
    cols = [
        *block,
        method,
        "vs",
        "n",
        "mean_a",
        "mean_b",
        "mean_diff",
        "ci_lo",
        "ci_hi",
        "p_permutation",
        "p_wilcoxon",
        "cohens_dz",
    ]
    return pd.DataFrame(rows, columns=cols)
