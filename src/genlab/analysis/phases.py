"""Phase diagrams of learning (Liu et al., "Towards Understanding Grokking: An Effective Theory of
Representation Learning", NeurIPS 2022, catalogue #107).

Each run of a grid over two numeric hyperparameters is classified by when it first reaches a level
(90% by default) of train and test accuracy within its budget:

- ``comprehension``: test follows train within ``delay`` steps;
- ``grokking``: test reaches the level, but more than ``delay`` steps after train;
- ``memorization``: train reaches the level, test never does;
- ``confusion``: train never reaches it.

Liu et al. use 90% and a fixed step gap relative to their budget; here ``delay`` defaults to a tenth
of the budget.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402

from genlab.analysis.milestones import first_step, last_value  # noqa: E402
from genlab.errors import SpecError  # noqa: E402
from genlab.report.plots import save_figure
from genlab.spec import RunSpec, parse_spec  # noqa: E402

PHASES = ("comprehension", "grokking", "memorization", "confusion")
COLORS = ("#2c7fb8", "#41ab5d", "#fdae61", "#d7191c")


def classify(t_train: float, t_test: float, delay: float) -> str:
    """The phase of one run from its steps to the level on train and test (NaN = never)."""
    if math.isnan(t_train):
        return "confusion"
    if math.isnan(t_test):
        return "memorization"
    return "grokking" if t_test - t_train > delay else "comprehension"


def _get(d: dict[str, Any], path: str) -> Any:
    node: Any = d
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(path)
        node = node[part]
    return node


def _numeric_fields(d: dict[str, Any], prefix: str = "") -> list[str]:
    out = []
    for k, v in d.items():
        if isinstance(v, dict):
            out += _numeric_fields(v, f"{prefix}{k}.")
        elif isinstance(v, int | float) and not isinstance(v, bool):
            out.append(prefix + k)
    return out


def check_axis(base: RunSpec, path: str, values: list[Any]) -> None:
    """``SpecError`` unless ``path`` is a numeric field of ``base`` and ``values`` are numbers."""
    dumped = base.model_dump(mode="json")
    try:
        current = _get(dumped, path)
        numeric = isinstance(current, int | float) and not isinstance(current, bool)
    except KeyError:
        numeric = False
    if not numeric:
        allowed = ", ".join(_numeric_fields(dumped))
        raise SpecError(
            f"phase axis {path!r} is not a numeric field of the spec; numeric fields: {allowed}"
        )
    bad = [v for v in values if isinstance(v, bool) or not isinstance(v, int | float)]
    if bad or not values:
        raise SpecError(
            f"phase axis {path!r}: values must be a non-empty list of numbers, got {values!r}"
        )


def grid_specs(
    base: dict[str, Any], x: str, xs: list[float], y: str, ys: list[float], seeds: int = 1
) -> list[RunSpec]:
    """One spec per ``(x, y, seed)``; ``x``/``y`` are dotted paths into the (validated) spec,
    e.g. ``optimizer.lr``, ``optimizer.weight_decay``, ``task.params.train_fraction``."""
    ref = parse_spec(base)
    check_axis(ref, x, xs)
    check_axis(ref, y, ys)
    out = []
    for xv in xs:
        for yv in ys:
            for s in range(seeds):
                d = copy.deepcopy(ref.model_dump(mode="json"))
                for path, v in ((x, xv), (y, yv)):
                    *head, last = path.split(".")
                    node = d
                    for part in head:
                        node = node[part]
                    node[last] = v
                d.update(seed=s, data_seed=s)
                out.append(parse_spec(d))
    return out


def phase_table(
    specs: list[RunSpec],
    x: str,
    y: str,
    metrics: pd.DataFrame,
    train: str,
    test: str,
    level: float = 0.9,
    delay_frac: float = 0.1,
) -> pd.DataFrame:
    """Per run: the axis values, steps to ``level`` on ``train``/``test``, the phase, and the
    last ``model:rep_quality`` when it was probed."""
    t_tr = first_step(metrics, train, "accuracy", level)
    t_te = first_step(metrics, test, "accuracy", level)
    rq = last_value(metrics, "model", "rep_quality")
    rows = []
    for s in specs:
        d = s.model_dump(mode="json")
        a, b = t_tr.get(s.run_id, np.nan), t_te.get(s.run_id, np.nan)
        rows.append(
            {
                "run_id": s.run_id,
                "x": _get(d, x),
                "y": _get(d, y),
                "seed": s.seed,
                "t_train": a,
                "t_test": b,
                "phase": classify(a, b, delay_frac * s.steps),
                "rep_quality": rq.get(s.run_id, np.nan),
            }
        )
    return pd.DataFrame(rows)


def plot_phase_diagram(table: pd.DataFrame, x: str, y: str, path: Path, title: str = "") -> Path:
    """The phase of each cell (seed 0), coloured, with representation quality written in it."""
    cell = table[table["seed"] == table["seed"].min()]
    xs, ys = sorted(cell["x"].unique()), sorted(cell["y"].unique())
    grid = np.full((len(ys), len(xs)), np.nan)
    fig, ax = plt.subplots(figsize=(1.1 * len(xs) + 3, 0.8 * len(ys) + 2))
    for _, r in cell.iterrows():
        i, j = ys.index(r["y"]), xs.index(r["x"])
        grid[i, j] = PHASES.index(r["phase"])
        if not math.isnan(r["rep_quality"]):
            ax.text(j, i, f"{r['rep_quality']:.2f}", ha="center", va="center", fontsize=8)
    ax.imshow(grid, cmap=ListedColormap(COLORS), vmin=-0.5, vmax=3.5, origin="lower", aspect="auto")
    ax.set_xticks(range(len(xs)), [f"{v:g}" for v in xs])
    ax.set_yticks(range(len(ys)), [f"{v:g}" for v in ys])
    ax.set(xlabel=x, ylabel=y, title=title or "phase diagram (numbers: representation quality)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLORS]
    ax.legend(
        handles, PHASES, fontsize=7, frameon=False, bbox_to_anchor=(1.02, 1), loc="upper left"
    )
    return save_figure(fig, path)
