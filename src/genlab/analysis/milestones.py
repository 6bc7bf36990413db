"""When a run first reaches a level: the step counts that grokking claims are made of."""

from __future__ import annotations

import numpy as np
import pandas as pd


def first_step(
    metrics: pd.DataFrame, split: str, metric: str, threshold: float, mode: str = "ge"
) -> pd.Series:
    """Per ``run_id``, the first evaluated step where ``metric`` on ``split`` is ``>= threshold``
    (``mode="le"``: ``<=``); NaN for runs that never get there. Step 0 (initialisation) counts."""
    rows = metrics[(metrics["split"] == split) & (metrics["metric"] == metric)]
    hit = rows["value"] >= threshold if mode == "ge" else rows["value"] <= threshold
    ids = metrics["run_id"].unique()
    return (
        rows[hit]
        .groupby("run_id")["step"]
        .min()
        .reindex(ids)
        .astype(float)
        .rename(f"steps_to_{metric}_{threshold:g}")
    )


def last_value(metrics: pd.DataFrame, split: str, metric: str) -> pd.Series:
    """Per ``run_id``, the value of ``metric`` on ``split`` at the last evaluated step."""
    rows = metrics[(metrics["split"] == split) & (metrics["metric"] == metric)]
    if rows.empty:
        return pd.Series(np.nan, index=metrics["run_id"].unique())
    return rows.sort_values("step").groupby("run_id")["value"].last()
