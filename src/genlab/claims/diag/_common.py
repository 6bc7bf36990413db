"""What the diagnostics claims share: the SGD-trained MLP on digits (``tasks/digits.py``), the zoo
measures (the generalization gap), and bootstrap intervals for rank correlations over a zoo."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from genlab.claims.guards import Interval
from genlab.claims.measures import Derived, Final, series

TRAIN, VAL, TEST = "train/main", "val/main", "test/heldout"


def digits_base(
    *,
    train_size: int,
    width: int,
    depth: int,
    lr: float,
    batch_size: int,
    steps: int,
    every: int,
    probes: list[dict],
    val_size: int = 0,
    **task: Any,
) -> dict[str, Any]:
    """An MLP trained by plain SGD on digits, evaluated every ``every`` steps (a Design base)."""
    return {
        "task": {
            "name": "digits",
            "params": {"train_size": train_size, "val_size": val_size, **task},
        },
        "model": {"name": "mlp", "params": {"width": width, "depth": depth}},
        "optimizer": {"name": "sgd", "lr": lr},
        "steps": steps,
        "batch_size": batch_size,
        "eval": {
            "every": every,
            "log_points": 0,
            "probes": [{"name": "accuracy"}, {"name": "loss"}, *probes],
        },
        "checkpoint_every": steps,
    }


def _gap(m: pd.DataFrame) -> float:
    train, test = series(m, TRAIN, "accuracy"), series(m, TEST, "accuracy")
    return float(train.iloc[-1] - test.iloc[-1]) if len(train) and len(test) else float("nan")


GAP = Derived(_gap, "generalization gap: train minus test accuracy at the last evaluation")
TRAIN_ACC = Final(TRAIN)


def at_step0(split: str, metric: str) -> Derived:
    """The value at initialisation (step 0): a measure of the untrained architecture."""

    def fn(m: pd.DataFrame) -> float:
        v = m[(m["step"] == 0) & (m["split"] == split) & (m["metric"] == metric)]["value"]
        return float(v.iloc[0]) if len(v) else float("nan")

    return Derived(fn, f"{metric} on {split} at initialisation (step 0)")


def bootstrap_interval(
    name: str,
    stat: Callable[[np.ndarray], float],
    n: int,
    groups: np.ndarray | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    **kw: Any,
) -> Interval:
    """``stat`` over all ``n`` units with a 95% percentile bootstrap CI: ``stat`` takes indices,
    units are resampled with replacement (within each of ``groups``, for a two-sample
    statistic)."""
    if n < 3:
        return Interval(name, float("nan"), float("nan"), float("nan"), n, **kw)
    rng = np.random.default_rng(seed)
    parts = (
        [np.flatnonzero(groups == g) for g in np.unique(groups)]
        if groups is not None
        else [np.arange(n)]
    )
    boots = np.array(
        [stat(np.concatenate([rng.choice(p, len(p)) for p in parts])) for _ in range(n_boot)]
    )
    boots = boots[np.isfinite(boots)]
    lo, hi = np.percentile(boots, [2.5, 97.5]) if len(boots) else (float("nan"),) * 2
    return Interval(name, float(stat(np.arange(n))), float(lo), float(hi), n, **kw)


def kendall(x: np.ndarray, y: np.ndarray) -> Callable[[np.ndarray], float]:
    """Kendall's tau-b of ``x`` with ``y`` on resampled indices (NaN when undefined)."""
    from scipy.stats import kendalltau

    def stat(i: np.ndarray) -> float:
        a, b = x[i], y[i]
        if np.ptp(a) == 0 or np.ptp(b) == 0:
            return float("nan")
        return float(kendalltau(a, b).statistic)

    return stat


def finite_rows(table: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """The finished runs with every one of ``cols`` finite."""
    done = table[table["status"] == "done"]
    return done[np.isfinite(done[cols].astype(float)).all(axis=1)]


def unit(arm: dict[str, Any], salt: str = "") -> float:
    """A number in [0, 1) fixed by a run's labels (and ``salt``): the per-model draws of the
    synthetic zoo tables (``Claim.synthetic``), repeatable and independent across salts."""
    text = json.dumps({**arm, "_salt": salt}, sort_keys=True, default=str)
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16) / 16**12


def zoo_arms(
    vary: dict[str, list[Any]],
    probe: str,
    params: dict[str, Any],
    *,
    steps: int,
    train_size: int,
    seeds: int,
    size: int,
):
    """Every model of a zoo (``genlab.zoo``: MLPs on digits, AdamW) with one ``probe``: each
    drawn hyperparameter setting of ``vary`` trained with seeds ``0..seeds-1``."""
    from genlab.design import Design
    from genlab.zoo.config import ZooConfig, zoo_design

    cfg = ZooConfig(
        size=size,
        vary=vary,
        probes=[probe],
        probe_params={probe: params},
        steps=steps,
        train_size=train_size,
    )
    d = zoo_design(cfg)
    return Design(d.base, rows=d.rows, seeds=range(seeds)).expand()
