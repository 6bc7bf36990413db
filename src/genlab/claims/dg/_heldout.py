"""What the C4 claims on generated contexts (row 39) share: a run spec with DomainBed's
defaults (Adam 1e-3, batch 64 per training environment, no weight decay), held-out accuracy at
the checkpoint of best training-domain validation (DomainBed's default rule), and paired gains
between two arms of the same seed and data."""

from __future__ import annotations

from typing import Any

import pandas as pd

from genlab.claims.guards import Interval
from genlab.claims.measures import AtBest

SMALL_CNN = {"name": "cnn", "params": {"channels": [16, 32], "norm": "none", "pool_every": 1}}
MLP = {"name": "mlp", "params": {"width": 256, "depth": 2}}
HELDOUT = AtBest("test/*", select="val/*")  # held-out accuracy, training-domain validation
VAL = AtBest("val/*", select="val/*")  # in-distribution (training-domain) validation accuracy


def dg_base(task: str, task_params: dict[str, Any], model: dict[str, Any], method: str = "erm",
            method_params: dict[str, Any] | None = None, steps: int = 501, eval_every: int = 50,
            probes: list[dict[str, Any]] | None = None) -> dict[str, Any]:  # fmt: skip
    """One run's spec dict with DomainBed's defaults (``data_seed`` and ``seed`` come from the
    ``Design``)."""
    return {
        "task": {"name": task, "params": task_params}, "model": model,
        "method": {"name": method, "params": method_params or {}},
        "optimizer": {"name": "adam", "lr": 1e-3, "weight_decay": 0.0, "betas": [0.9, 0.999]},
        "steps": steps, "batch_size": 64, "checkpoint_every": steps,
        "eval": {"every": eval_every, "log_points": 0,
                 "probes": probes or [{"name": "accuracy"}]},
    }  # fmt: skip


def per_seed(table: pd.DataFrame, arm: str, value: str) -> pd.DataFrame:
    """``value`` per seed (rows) and arm (columns), averaged over every other label (e.g. the
    held-out settings of a leave-one-domain-out design)."""
    return table.pivot_table(index="seed", columns=arm, values=value, aggfunc="mean")


def gain(table: pd.DataFrame, arm: str, a: str, b: str, value: str, smallest: float,
         **kw: Any) -> Interval:  # fmt: skip
    """The paired gain of arm ``a`` over arm ``b`` in ``value`` (same seed and data), mean and
    95% CI over seeds, decisive at ``smallest``."""
    wide = per_seed(table, arm, value)
    d = (wide[a] - wide[b]).dropna() if {a, b} <= set(wide) else pd.Series(dtype=float)
    return Interval.of(f"{value}: {a} - {b}", d.tolist(), smallest=smallest, **kw)
