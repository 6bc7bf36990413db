"""Phase diagrams of learning (Liu et al., "Towards Understanding Grokking: An Effective Theory of
Representation Learning", NeurIPS 2022, catalogue #107).

Each run of a grid over two numeric hyperparameters is classified by when it first reaches a level
(90%, Liu et al.'s) of train and test accuracy within its budget:

- ``comprehension``: test follows train within ``delay`` steps;
- ``grokking``: test reaches the level, but more than ``delay`` steps after train;
- ``memorization``: train reaches the level, test never does;
- ``confusion``: train never reaches it.

Liu et al. use a fixed step gap relative to their budget; here ``delay`` defaults to a tenth of the
budget. The grid is a ``genlab.design.Design`` (``phase_design``); the diagram is drawn by
``genlab.report.claim_figures.PhaseGrid``.
"""

from __future__ import annotations

import math
from typing import Any

from genlab.design import Design
from genlab.errors import SpecError
from genlab.spec import parse_spec

PHASES = ("comprehension", "grokking", "memorization", "confusion")


def classify(t_train: float, t_test: float, delay: float) -> str:
    """The phase of one run from its steps to the level on train and test (NaN = never)."""
    if math.isnan(t_train):
        return "confusion"
    if math.isnan(t_test):
        return "memorization"
    return "grokking" if t_test - t_train > delay else "comprehension"


def _numeric_fields(d: dict[str, Any], prefix: str = "") -> list[str]:
    out = []
    for k, v in d.items():
        if isinstance(v, dict):
            out += _numeric_fields(v, f"{prefix}{k}.")
        elif isinstance(v, int | float) and not isinstance(v, bool):
            out.append(prefix + k)
    return out


def check_axis(base: dict[str, Any], path: str, values: list[Any]) -> None:
    """``SpecError`` unless ``path`` is a numeric field of the spec ``base`` and ``values`` are
    numbers (a dotted path in full: ``optimizer.lr``, ``task.params.train_fraction``)."""
    fields = _numeric_fields(parse_spec(base).model_dump(mode="json"))
    if path not in fields:
        raise SpecError(f"phase axis {path!r} is not a numeric field of the spec; numeric fields: "
                        f"{', '.join(fields)}")  # fmt: skip
    if not values or any(isinstance(v, bool) or not isinstance(v, int | float) for v in values):
        raise SpecError(f"phase axis {path!r}: values must be a non-empty list of numbers, "
                        f"got {values!r}")  # fmt: skip


def phase_design(base: dict[str, Any], x: str, xs: list[float], y: str, ys: list[float],
                 seeds: int = 1) -> Design:  # fmt: skip
    """The grid ``x`` x ``y`` over ``base`` (both checked to be numeric spec fields), per seed;
    each arm is labelled by the two paths."""
    check_axis(base, x, xs)
    check_axis(base, y, ys)
    return Design(base, axes={x: xs, y: ys}, seeds=seeds)
