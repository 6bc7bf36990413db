"""Arms written out run by run, and the paired read of one arm's values by seed.

Most claims expand a ``Design`` (axes times seeds); a staged design, where a run names its
parent's id, or a study whose arms differ in more than one axis, lists its ``(labels, spec)``
pairs instead (``arms``). ``by_seed`` reads one arm's values indexed by seed, for paired
differences across arms.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from genlab.design import Arm
from genlab.spec import parse_spec


def by_seed(table: pd.DataFrame, arm: str, value: str, column: str = "arm") -> pd.Series:
    """``value`` of the runs of one arm, indexed by seed (paired comparisons across arms)."""
    rows = table[table[column] == arm]
    return pd.Series(rows[value].to_numpy(dtype=float), index=rows["seed"].to_numpy())


def arms(rows: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[Arm]:
    """Labelled arms from ``(labels, spec dict)`` pairs; ``seed``/``data_seed`` labels from the spec
    (staged designs, where a run names its parent's id, are written out run by run)."""
    out = []
    for labels, d in rows:
        spec = parse_spec(d)
        out.append(Arm({**labels, "seed": spec.seed, "data_seed": spec.data_seed}, spec))
    return out
