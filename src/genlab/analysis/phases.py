"""Phase diagrams of learning (Liu et al., "Towards Understanding Grokking: An Effective Theory of
Representation Learning", NeurIPS 2022, catalogue #107).

Each run of a grid over two numeric hyperparameters is classified by when it first reaches a level
(90%, Liu et al.'s) of train and test accuracy within its budget:

- ``comprehension``: test follows train within ``delay`` steps;
- ``grokking``: test reaches the level, but more than ``delay`` steps after train;
- ``memorization``: train reaches the level, test never does;
- ``confusion``: train never reaches it.

Liu et al. use a fixed step gap relative to their budget; here ``delay`` defaults to a tenth of the
budget. The grid is a ``genlab.design.Design`` (``genlab.design.phase_design``); the diagram is
drawn by ``genlab.report.claim_figures.PhaseGrid``.
"""

from __future__ import annotations

import math

PHASES = ("comprehension", "grokking", "memorization", "confusion")


def classify(t_train: float, t_test: float, delay: float) -> str:
    """The phase of one run from its steps to the level on train and test (NaN = never)."""
    if math.isnan(t_train):
        return "confusion"
    if math.isnan(t_test):
        return "memorization"
    return "grokking" if t_test - t_train > delay else "comprehension"
