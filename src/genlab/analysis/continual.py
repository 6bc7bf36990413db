"""Continual-learning metrics from a run's long-format metrics, as Avalanche defines them.

``R[i, j]`` is the accuracy on experience ``j``'s test split after training on experience ``i``
(the evaluation at the end of experience ``i``); ``b[j]`` that of the model as initialised (step 0).
With ``T`` experiences (Lopez-Paz & Ranzato 2017, GEM; Avalanche's ``metrics`` module):

- average accuracy ``ACC = mean_j R[T-1, j]`` (Avalanche's stream accuracy after the last one);
- forgetting ``F = mean_{j < T-1} (R[j, j] - R[T-1, j])`` (Avalanche's ``StreamForgetting``: the
  accuracy just after learning ``j`` minus the last one, over the experiences before the last);
- backward transfer ``BWT = -F`` (Avalanche's ``StreamBWT``);
- forward transfer ``FWT = mean_{j >= 1} (R[j-1, j] - b[j])`` (Avalanche's
  ``StreamForwardTransfer``: accuracy on ``j`` before training on it, minus at initialisation).

Used by the Model Zoo claim (#120) and by ``genlab run``; fast/slow weights (#95) reports the same.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

SPLIT = re.compile(r"^test/e(\d+)$")


def boundaries(steps: int, n: int) -> list[int]:
    """The last step of each of ``n`` experiences over ``steps`` (the last takes the remainder)."""
    per = max(1, steps // n)
    return [per * (k + 1) for k in range(n - 1)] + [steps]


def accuracy_matrix(m: pd.DataFrame, steps: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(R, b)`` from one run's metrics (``step, split, metric, value``); ``steps`` defaults to
    the last evaluated step. Rows not evaluated (a run that stopped early) are NaN."""
    acc = m[(m["metric"] == "accuracy") & m["split"].str.match(SPLIT.pattern)]
    if acc.empty:
        return np.full((0, 0), np.nan), np.full(0, np.nan)
    exp = acc["split"].str.extract(SPLIT.pattern)[0].astype(int)
    n = int(exp.max()) + 1
    table = acc.assign(exp=exp).pivot_table(index="step", columns="exp", values="value")
    steps = int(table.index.max()) if steps is None else steps
    rows = [
        table.loc[s].to_numpy() if s in table.index else np.full(n, np.nan)
        for s in boundaries(steps, n)
    ]
    init = table.loc[0].to_numpy() if 0 in table.index else np.full(n, np.nan)
    return np.vstack(rows), init


def summary(r: np.ndarray, b: np.ndarray | None = None) -> dict[str, float]:
    """``avg_accuracy``, ``forgetting``, ``bwt`` and ``fwt`` (NaN without ``b``) of ``R``."""
    t = len(r)
    if t == 0:
        return {k: float("nan") for k in ("avg_accuracy", "forgetting", "bwt", "fwt")}
    forget = float(np.mean([r[j, j] - r[t - 1, j] for j in range(t - 1)])) if t > 1 else 0.0
    fwt = float("nan")
    if b is not None and t > 1:
        fwt = float(np.mean([r[j - 1, j] - b[j] for j in range(1, t)]))
    return {
        "avg_accuracy": float(np.mean(r[t - 1])),
        "forgetting": forget,
        "bwt": -forget,
        "fwt": fwt,
    }


def long_table(r: np.ndarray) -> pd.DataFrame:
    """``R`` in long format: ``trained`` (i), ``tested`` (j), ``accuracy``."""
    i, j = np.indices(r.shape)
    return pd.DataFrame({"trained": i.ravel(), "tested": j.ravel(), "accuracy": r.ravel()})


def run_summary(m: pd.DataFrame) -> dict[str, float]:
    """``summary`` of one run's metrics."""
    return summary(*accuracy_matrix(m))
