"""Evaluation steps: log-spaced early (where grokking's first phase happens) plus a linear grid."""

from __future__ import annotations

import numpy as np


def eval_steps(steps: int, every: int, log_points: int) -> set[int]:
    """Step 0, every ``every``-th step, ``log_points`` log-spaced steps in [1, steps], and the last."""
    out = {0, steps, *range(every, steps + 1, every)}
    if log_points and steps:
        out.update(int(s) for s in np.unique(np.round(np.geomspace(1, steps, log_points))))
    return out
