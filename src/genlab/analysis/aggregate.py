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

from genlab.analysis.intervals import Interval, interval
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


def summarize(
    frame: pd.DataFrame,
    by: Sequence[str],
    value: str = "value",
    confidence: float = 0.95,
    how: Interval = "t",
) -> pd.DataFrame:
    """``mean, std, ci_lo, ci_hi, n`` of ``value`` per group of ``by``: Student t over the rows,
    or with ``how="bootstrap"`` a percentile bootstrap, which stays in [0, 1] for accuracies
    (``genlab.analysis.intervals``)."""
    by = list(by)
    rows = []
    for key, g in frame.groupby(by, sort=True, dropna=False) if by else [((), frame)]:
        key = key if isinstance(key, tuple) else (key,)
        rows.append(
            {**dict(zip(by, key, strict=True)), **interval(g[value].tolist(), how, confidence)}
        )
    return pd.DataFrame(rows, columns=[*by, *STAT_COLS])


def environments(
    frame: pd.DataFrame,
    by: Sequence[str],
    role: str = "test",
    metric: str = "accuracy",
    seed: str = "seed",
    how: Interval = "t",
) -> pd.DataFrame:
    """The average over the ``role/<env>`` splits and the worst environment beside it, per group.

    ``frame`` has one row per run and split (``final_values`` joined with labels). Per seed, the
    average over environments is taken; ``mean``/``ci_*`` summarise it over seeds. The worst
    environment is the one with the lowest mean over seeds, and ``worst``/``worst_ci_*`` summarise
    that environment over seeds (``how``: the interval, as in ``summarize``).
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
            interval(per_seed.tolist(), how),
            interval(g[g["split"] == worst_env]["value"].tolist(), how),
        )
        out.append(
            {
                **dict(zip(by, key, strict=True)),
                "n_envs": len(per_env),
                "mean": avg["mean"],
                "ci_lo": avg["ci_lo"],
                "ci_hi": avg["ci_hi"],
                "n": avg["n"],
                "worst_env": worst_env.split("/", 1)[1],
                "worst": worst["mean"],
                "worst_ci_lo": worst["ci_lo"],
                "worst_ci_hi": worst["ci_hi"],
            }
        )
    cols = [
        *by,
        "n_envs",
        "mean",
        "ci_lo",
        "ci_hi",
        "n",
        "worst_env",
        "worst",
        "worst_ci_lo",
        "worst_ci_hi",
    ]
    return pd.DataFrame(out, columns=cols)


def curves(
    metrics: pd.DataFrame,
    labels: pd.DataFrame,
    by: Sequence[str],
    split: str,
    metric: str = "accuracy",
    how: Interval = "t",
) -> pd.DataFrame:
    """Learning curves with seed bands: per group and step, ``mean, std, ci_lo, ci_hi, n``."""
    rows = metrics[(metrics["split"] == split) & (metrics["metric"] == metric)]
    rows = rows.merge(labels, on="run_id")
    return summarize(rows, [*by, "step"], how=how)


def _flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(d, dict):
        out: dict[str, Any] = {}
        for k, v in d.items():
            if not prefix and k == "imports":
                continue  # plugin records: implied by the component names, never a label
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: json.dumps(d) if isinstance(d, list) else d}


def run_labels(runs: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """One row per run: ``run_id``, ``seed``, ``data_seed`` and every spec field that varies
    between the runs (``optimizer.lr``, ``method.name``, ...); returns it and the varying fields
    (the group columns). ``runs`` is ``Store.runs()`` (its ``spec`` column is JSON)."""
    flat = [_flatten(json.loads(s) if isinstance(s, str) else s) for s in runs["spec"]]
    table = pd.DataFrame(flat, index=runs["run_id"].values)
    varying = [
        c
        for c in table.columns
        if c not in REPLICATE and table[c].astype(str).nunique(dropna=False) > 1
    ]
    out = table[[*REPLICATE, *varying]].copy()
    out.insert(0, "run_id", out.index)
    return out.reset_index(drop=True), varying


HELD_OUT = "task.params.test_envs"  # what a DomainBed sweep holds out per run


def _is_nan(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def _varies_within(table: pd.DataFrame, col: str, owner: str) -> pd.Series:
    """Per row: does ``col`` take more than one (non-missing) value among the rows that share
    this row's ``owner`` value (e.g. a method param within one method)?"""
    if owner not in table:
        return pd.Series(table[col].astype(str).nunique() > 1, index=table.index)
    present = table[col].notna()
    n = table[present].groupby(table[owner].astype(str))[col].agg(lambda s: s.astype(str).nunique())
    return table[owner].astype(str).map(n).fillna(0).gt(1) & present


def _label(table: pd.DataFrame, cols: list[str]) -> pd.Series:
    """``c=value`` pairs joined by ``, `` per row, leaving out missing values (never ``nan``);
    a param of a method (``method.params.*``) or task (``task.params.*``, except the held-out
    environments) only appears where it varies within that method or task."""
    keep = {}
    for c in cols:
        owner = next((o for o in ("method", "task") if c.startswith(f"{o}.params.")), None)
        owner = None if c == HELD_OUT else owner
        keep[c] = (
            _varies_within(table, c, f"{owner}.name")
            if owner
            else table[c].astype(str).nunique() > 1
        )
        if not isinstance(keep[c], pd.Series):
            keep[c] = pd.Series(keep[c], index=table.index)
    return pd.Series(
        [
            ", ".join(f"{c}={r[c]}" for c in cols if keep[c].loc[i] and not _is_nan(r[c]))
            for i, r in table.iterrows()
        ],
        index=table.index,
    )


def run_groups(runs: pd.DataFrame) -> pd.DataFrame:
    """What identifies each run in a report, from ``Store.runs()`` (JSON ``spec`` column): one row
    per run with ``run_id``, ``seed``, ``data_seed`` and

    * ``method``: ``method.name`` (``""`` when the specs have none);
    * ``config``: the hyperparameter configuration, i.e. the varying fields outside ``task.*``
      (``method.name=erm, optimizer.lr=0.01``; method params only where they vary within one
      method; missing values never printed);
    * ``task``: ``task.name`` plus task params that vary within that task, except the held-out
      environments (``task.params.test_envs``);
    * ``setting``: the held-out environments (``test_envs=[0]``, ``""`` without any);
    * ``group``: ``config`` and the varying task fields, the unit of the per-group tables
      (``all runs`` when only seeds vary).
    """
    flat = [_flatten(json.loads(s) if isinstance(s, str) else s) for s in runs["spec"]]
    table = pd.DataFrame(flat, index=range(len(flat)))
    for c in (*REPLICATE, "method.name", "task.name", HELD_OUT):
        if c not in table:
            table[c] = 0 if c in REPLICATE else ""
    varying = [
        c
        for c in table.columns
        if c not in REPLICATE and table[c].astype(str).nunique(dropna=False) > 1
    ]
    cfg_cols = sorted(
        (c for c in varying if not c.startswith("task.")),
        key=lambda c: (c != "method.name", c.startswith("method."), c),
    )
    task_cols = sorted(
        (c for c in varying if c.startswith("task.") and c != HELD_OUT),
        key=lambda c: (c != "task.name", c),
    )
    config = _label(table, cfg_cols)
    task_extra = _label(table, [c for c in task_cols if c != "task.name"])
    task = [
        ", ".join(p for p in (str(n), x) if p)
        for n, x in zip(table["task.name"], task_extra, strict=True)
    ]
    setting = ["" if _is_nan(v) or v == "" else f"test_envs={v}" for v in table[HELD_OUT]]
    group_task = _label(table, [c for c in varying if c.startswith("task.")])
    group = [
        ", ".join(p for p in (c, t) if p) or "all runs"
        for c, t in zip(config, group_task, strict=True)
    ]
    return pd.DataFrame(
        {
            "run_id": runs["run_id"].values,
            "seed": table["seed"].values,
            "data_seed": table["data_seed"].values,
            "method": table["method.name"].astype(str).values,
            "config": [c or "all runs" for c in config],
            "task": task,
            "setting": setting,
            "group": group,
        }
    )


def heldout_table(
    selected: pd.DataFrame,
    task: str = "task",
    method: str = "method",
    setting: str = "setting",
    trial: str = "trial",
    value: str = "test",
    how: Interval = "t",
) -> pd.DataFrame:
    """DomainBed's table in long form: per ``task`` and ``method``, the mean / std / 95% CI over
    trials of ``value`` in each held-out ``setting`` (``kind="setting"``), of its average over the
    settings (``kind="avg"``: averaged per trial over the settings, then summarised over trials,
    so only trials present in every setting of the task count) and of the worst setting
    (``kind="worst"``: the setting with the lowest mean; ``setting`` names it).

    ``selected`` has one row per task, method, setting and trial (``selection.select`` output).
    Reporting the worst held-out environment beside the average follows DomainBed (Gulrajani &
    Lopez-Paz, "In Search of Lost Domain Generalization"). ``how``: the interval, as in
    ``summarize``.
    """
    out = []
    for tk, t in selected.groupby(task, sort=False):
        settings = sorted(t[setting].unique())
        for m, g in t.groupby(method, sort=False):
            per = {s: interval(g.loc[g[setting] == s, value].tolist(), how) for s in settings}
            for s, st in per.items():
                out.append({task: tk, method: m, "kind": "setting", setting: s, **st})
            wide = g.pivot_table(index=trial, columns=setting, values=value).reindex(
                columns=settings
            )
            out.append(
                {
                    task: tk,
                    method: m,
                    "kind": "avg",
                    setting: "avg",
                    **interval(wide.dropna().mean(axis=1).tolist(), how),
                }
            )
            ok = {s: st for s, st in per.items() if st["n"] > 0}
            worst = min(ok, key=lambda s: ok[s]["mean"]) if ok else ""
            out.append(
                {
                    task: tk,
                    method: m,
                    "kind": "worst",
                    setting: worst,
                    **(ok[worst] if ok else mean_ci([])),
                }
            )
    return pd.DataFrame(out, columns=[task, method, "kind", setting, *STAT_COLS])


def arm_summary(
    table: pd.DataFrame, keys: Sequence[str], columns: Sequence[str], how: str = "mean"
) -> pd.DataFrame:
    """One row per arm (group of ``keys``): ``n`` runs and each column aggregated over them —
    ``mean`` with its Student-t 95% CI in ``<col>_lo``/``<col>_hi``, or the ``max`` (the best
    seed, as Delétang et al. score a cell) or the ``median`` (no interval). NaNs are dropped."""
    if how not in ("mean", "max", "median"):
        raise ValueError(f"how must be mean, max or median, got {how!r}")
    keys = list(keys)
    rows = []
    groups = table.groupby(keys, sort=False, dropna=False) if keys else [((), table)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = {**dict(zip(keys, key, strict=True)), "n": len(g)}
        for c in columns:
            v = pd.to_numeric(g[c], errors="coerce").dropna()
            if how == "mean":
                ci = mean_ci(v.tolist())
                row |= {c: ci["mean"], f"{c}_lo": ci["ci_lo"], f"{c}_hi": ci["ci_hi"]}
            else:
                row[c] = float(v.max() if how == "max" else v.median()) if len(v) else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)
