"""What the compositional claims share: one training recipe (Adam, gradients clipped at 5, one
evaluation at the end), a spec builder, and the paired-seed difference between two arms."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from pydantic import Field

from genlab.registry import Params

LSTM = {"cell": "lstm", "hidden": 128, "embed_dim": 64, "attention": True}  # the scan-* presets


class TrainConfig(Params):
    """Budget and seeds of every arm of a compositional claim."""

    steps: int = Field(2000, ge=1)
    batch_size: int = Field(64, ge=1)
    lr: float = Field(2e-3, gt=0)
    seeds: int = Field(3, ge=2, description="paired seeds (each arm sees data_seed = seed)")


def spec(
    cfg: TrainConfig,
    task: str,
    task_params: dict[str, Any],
    model: str,
    model_params: dict[str, Any],
    probes: Sequence[str | dict[str, Any]] = ("accuracy",),
    evals: int = 1,
) -> dict[str, Any]:
    """A spec dict: Adam at ``cfg.lr`` (clip 5), ``cfg.steps`` of ``cfg.batch_size``, ``evals``
    evenly spaced evaluations with ``probes`` (names, or ``{"name", "params"}``)."""
    return {
        "task": {"name": task, "params": dict(task_params)},
        "model": {"name": model, "params": dict(model_params)},
        "optimizer": {"name": "adam", "lr": cfg.lr, "grad_clip": 5.0},
        "steps": cfg.steps,
        "batch_size": cfg.batch_size,
        "checkpoint_every": cfg.steps,
        "eval": {
            "every": max(1, cfg.steps // evals),
            "log_points": 0,
            "probes": [p if isinstance(p, dict) else {"name": p} for p in probes],
        },
    }


def paired(table: pd.DataFrame, measure: str, hi: dict[str, Any], lo: dict[str, Any]):
    """Per seed, ``measure`` of the arm matching ``hi`` minus that of the arm matching ``lo``
    (arms of one seed share their data seed, so the difference is paired)."""

    def pick(where: dict[str, Any]) -> pd.Series:
        rows = table
        for k, v in where.items():
            rows = rows[rows[k] == v]
        return rows.set_index("seed")[measure]

    return (pick(hi) - pick(lo)).dropna().tolist()
