"""Shared helpers of the grokking claims (catalogue cluster C1): verdict rule, plotting, specs."""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")
import pandas as pd  # noqa: E402

from genlab.claims.base import Verdict  # noqa: E402
from genlab.spec import RunSpec, load_spec_file, parse_spec  # noqa: E402

TRAIN, TEST = "train/main", "test/heldout"


def verdict_from_passes(n_pass: int, n: int, min_n: int = 1) -> Verdict:
    """All units pass: reproduced; at most half: not reproduced; otherwise inconclusive."""
    if n >= min_n and n_pass == n:
        return "reproduced"
    if 2 * n_pass <= n:
        return "not reproduced"
    return "inconclusive"


def modular_base(
    p: int, train_fraction: float, steps: int, operation: str = "add", dtype: str = "float32"
) -> dict[str, Any]:
    """The grokking preset as a dict, on ``p``/``train_fraction``, full batch, no stop rule."""
    base = load_spec_file("grokking")
    base["task"]["params"].update(p=p, operation=operation, train_fraction=train_fraction)
    base.update(steps=steps, batch_size=None, dtype=dtype, stop=[])
    return base


def with_seeds(base: dict[str, Any], seeds: int) -> list[RunSpec]:
    """One spec per seed; ``seed`` and ``data_seed`` vary together."""
    return [parse_spec({**base, "seed": s, "data_seed": s}) for s in range(seeds)]


def curves(metrics: pd.DataFrame, split: str, metric: str) -> pd.DataFrame:
    """Wide table ``step x run_id`` of one metric on one split (steps > 0)."""
    rows = metrics[
        (metrics["split"] == split) & (metrics["metric"] == metric) & (metrics["step"] > 0)
    ]
    return rows.pivot_table(index="step", columns="run_id", values="value")
