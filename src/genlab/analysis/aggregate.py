"""Aggregation over seeds: final values, mean / std / 95% CI per group, the worst environment beside
the mean, and learning curves with seed bands. Pure functions from DataFrames to DataFrames.

Reporting seeds with an interval and the worst environment next to the average follows the advice of
DomainBed (Gulrajani & Lopez-Paz, "In Search of Lost Domain Generalization").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pandas as pd

from genlab.analysis.stats import mean_ci

REPLICATE = ("seed", "data_seed")  # what varies between repetitions of one configuration
STAT_COLS = ["mean", "std", "ci_lo", "ci_hi", "n"]


def final_values(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per run, split and metric, the value at the last step it was evaluated."""
    cols = ["run_id", "split", "metric", "step", "value"]
    if metrics.empty:
        return pd.DataFrame(columns=cols)
    last = metrics.sort_values("step").groupby(["run_id", "split", "metric"], sort=True).tail(1)
    return last[cols].sort_values(["run_id", "split", "metric"]).reset_index(drop=True)


def summarize(frame: pd.DataFrame, by: Sequence[str], value: str = "value",
              confidence: float = 0.95) -> pd.DataFrame:  # fmt: skip
    """``mean, std, ci_lo, ci_hi, n`` of ``value`` per group of ``by`` (Student t over the rows)."""
    by = list(by)
    rows = []
    for key, g in frame.groupby(by, sort=True, dropna=False) if by else [((), frame)]:
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key, strict=True)), **mean_ci(g[value].tolist(), confidence)})
    return pd.DataFrame(rows, columns=[*by, *STAT_COLS])


def environments(frame: pd.DataFrame, by: Sequence[str], role: str = "test",
                 metric: str = "accuracy", seed: str = "seed") -> pd.DataFrame:  # fmt: skip
    """The average over the ``role/<env>`` splits and the worst environment beside it, per group.

    ``frame`` has one row per run and split (``final_values`` joined with labels). Per seed, the
    average over environments is taken; ``mean``/``ci_*`` summarise it over seeds. The worst
    environment is the one with the lowest mean over seeds, and ``worst``/``worst_ci_*`` summarise
    that environment over seeds.
    """
    by = list(by)
    rows = frame[frame["split"].str.startswith(role + "/") & (frame["metric"] == metric)]
    out = []
    for key, g in rows.groupby(by, sort=True) if by else [((), rows)]:
        key = key if isinstance(key, tuple) else (key,)
        per_seed = g.groupby(seed)["value"].mean()
        per_env = g.groupby("split")["value"].mean()
        worst_env = per_env.idxmin()
        avg, worst = (
            mean_ci(per_seed.tolist()),
            mean_ci(g[g["split"] == worst_env]["value"].tolist()),
        )
        out.append({
            **dict(zip(by, key, strict=True)), "n_envs": len(per_env), "mean": avg["mean"],
            "ci_lo": avg["ci_lo"], "ci_hi": avg["ci_hi"], "n": avg["n"],
            "worst_env": worst_env.split("/", 1)[1], "worst": worst["mean"],
            "worst_ci_lo": worst["ci_lo"], "worst_ci_hi": worst["ci_hi"],
        })  # fmt: skip
    cols = [*by, "n_envs", "mean", "ci_lo", "ci_hi", "n", "worst_env", "worst", "worst_ci_lo",
            "worst_ci_hi"]  # fmt: skip
    return pd.DataFrame(out, columns=cols)


def curves(metrics: pd.DataFrame, labels: pd.DataFrame, by: Sequence[str], split: str,
           metric: str = "accuracy") -> pd.DataFrame:  # fmt: skip
    """Learning curves with seed bands: per group and step, ``mean, std, ci_lo, ci_hi, n``."""
    rows = metrics[(metrics["split"] == split) & (metrics["metric"] == metric)]
    rows = rows.merge(labels, on="run_id")
    return summarize(rows, [*by, "step"])


def _flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(d, dict):
        out: dict[str, Any] = {}
        for k, v in d.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: json.dumps(d) if isinstance(d, list) else d}


def run_labels(runs: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """One row per run: ``run_id``, ``seed``, ``data_seed`` and every spec field that varies
    between the runs (``optimizer.lr``, ``method.name``, ...); returns it and the varying fields
    (the group columns). ``runs`` is ``Store.runs()`` (its ``spec`` column is JSON)."""
    flat = [_flatten(json.loads(s) if isinstance(s, str) else s) for s in runs["spec"]]
    table = pd.DataFrame(flat, index=runs["run_id"].values)
    varying = [c for c in table.columns
               if c not in REPLICATE and table[c].astype(str).nunique(dropna=False) > 1]  # fmt: skip
    out = table[[*REPLICATE, *varying]].copy()
    out.insert(0, "run_id", out.index)
    return out.reset_index(drop=True), varying
