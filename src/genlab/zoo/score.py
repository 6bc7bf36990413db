"""Scores of a generalization measure over a zoo: Kendall's tau and PGDL's conditional MI.

Kendall's tau between a measure and the generalization gap (train minus test accuracy) across
models (scipy). The conditional mutual information score is the one of "Fantastic Generalization
Measures" (Jiang et al., ICLR 2020) used by the PGDL competition (Jiang et al., NeurIPS 2020):
over pairs of models, ``V_mu = sign(mu_i - mu_j)`` and ``V_g = sign(gap_i - gap_j)``; for a set
``S`` of varied hyperparameters, ``U_S`` is the pair's values of them, and the score of ``S`` is
``I(V_mu; V_g | U_S) / H(V_g | U_S)`` (1: the measure tells the order of the gaps exactly, even
among models that share those hyperparameter values; 0: it tells nothing). The reported score is
the minimum over all ``S`` of size two (size one when only one hyperparameter varies), i.e. the
hyperparameters whose changes the measure explains worst. Plug-in estimates: with few pairs per
``U_S`` value they are biased upwards, so compare measures within one zoo, not across zoos.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy.stats import kendalltau


def kendall_tau(measure: np.ndarray, gap: np.ndarray) -> tuple[float, float]:
    """Kendall's tau-b of ``measure`` with ``gap`` and its p-value (NaN when undefined)."""
    ok = np.isfinite(measure) & np.isfinite(gap)
    if ok.sum() < 3 or np.ptp(measure[ok]) == 0 or np.ptp(gap[ok]) == 0:
        return float("nan"), float("nan")
    res = kendalltau(measure[ok], gap[ok])
    return float(res.statistic), float(res.pvalue)


def _entropy(counts: np.ndarray) -> float:
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def _mi_and_h(vm: np.ndarray, vg: np.ndarray) -> tuple[float, float]:
    """Plug-in ``I(vm; vg)`` and ``H(vg)`` (nats) of two arrays of signs."""
    table = np.zeros((3, 3))
    np.add.at(table, ((vm + 1).astype(int), (vg + 1).astype(int)), 1.0)  # signs in {-1, 0, 1}
    h_g = _entropy(table.sum(0))
    mi = _entropy(table.sum(1)) + h_g - _entropy(table.ravel())
    return max(mi, 0.0), h_g


def cmi_score(measure: np.ndarray, gap: np.ndarray, hps: pd.DataFrame) -> float:
    """The PGDL conditional mutual information score (see the module docstring)."""
    ok = np.isfinite(measure) & np.isfinite(gap)
    measure, gap, hps = measure[ok], gap[ok], hps.loc[ok].reset_index(drop=True)
    if len(measure) < 2:
        return float("nan")
    i, j = np.triu_indices(len(measure), k=1)
    vm, vg = np.sign(measure[i] - measure[j]), np.sign(gap[i] - gap[j])
    cols = list(hps.columns)
    subsets = list(itertools.combinations(cols, min(2, len(cols)))) or [()]
    scores = []
    for s in subsets:
        if s:
            vals = hps[list(s)].astype(str).agg("|".join, axis=1).to_numpy()
            key = np.char.add(np.char.add(vals[i].astype(str), "/"), vals[j].astype(str))
        else:
            key = np.zeros(len(i), dtype=str)
        mi = h = 0.0
        for u in np.unique(key):
            sel = key == u
            m, hg = _mi_and_h(vm[sel], vg[sel])
            w = sel.mean()
            mi, h = mi + w * m, h + w * hg
        scores.append(mi / h if h > 0 else float("nan"))
    finite = [x for x in scores if np.isfinite(x)]
    return float(min(finite)) if finite else float("nan")


def rank_measures(measures: pd.DataFrame, gap: pd.Series, hps: pd.DataFrame) -> pd.DataFrame:
    """One row per measure (a column of ``measures``; rows are models): tau, its p-value, |tau|,
    the CMI score and the models it was computed on, best (highest CMI, then |tau|) first."""
    rows = []
    g = gap.to_numpy(dtype=float)
    for name in measures.columns:
        m = measures[name].to_numpy(dtype=float)
        tau, p = kendall_tau(m, g)
        rows.append(
            {
                "measure": name,
                "tau": tau,
                "p_value": p,
                "abs_tau": abs(tau),
                "cmi": cmi_score(m, g, hps),
                "models": int(np.isfinite(m).sum()),
            }
        )
    table = pd.DataFrame(rows, columns=["measure", "tau", "p_value", "abs_tau", "cmi", "models"])
    return table.sort_values(["cmi", "abs_tau"], ascending=False, na_position="last").reset_index(
        drop=True
    )
