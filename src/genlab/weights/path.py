"""Accuracy per split along weight-space paths between finished runs (``genlab soup``).

``interpolation_path`` evaluates ``theta(lam) = (1 - lam) * theta_a + lam * theta_b`` at each
``lam`` on every split of a task (by default the task of run ``b``, the fine-tuned end in WiSE-FT),
keeping each example's correctness so that ``false_false_true`` can count the examples both ends
get wrong and the interpolation gets right (Lin et al., "Spurious Feature Diversification Improves
OOD Generalization", ICLR 2024, #16).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import torch
from torch import Tensor, nn

from genlab.data import TaskData
from genlab.errors import SpecError
from genlab.losses import correct, cross_entropy
from genlab.probes.base import EvalContext
from genlab.store import Store
from genlab.weights.load import (
    build_plain,
    build_task_data,
    check_same_shapes,
    check_shared_init,
    finished_spec,
    load_into,
    plain_state,
)
from genlab.weights.ops import State, interpolate, recompute_bn


@dataclass
class PathResult:
    """``table``: one row per (lam, split) with ``accuracy`` and ``loss``; ``correct``: per split a
    boolean tensor ``(len(lambdas), N)``; ``shared``: what the two runs share."""

    lambdas: list[float]
    table: pd.DataFrame
    correct: dict[str, Tensor] = field(default_factory=dict)
    shared: str = ""


def parse_lambdas(text: str) -> list[float]:
    """``"0:1:11"`` (start:stop:count, both ends included) or ``"0,0.5,1"``."""
    try:
        if ":" in text:
            start, stop, count = text.split(":")
            n = int(count)
            if n < 2:
                raise ValueError
            return torch.linspace(float(start), float(stop), n, dtype=torch.float64).tolist()
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise SpecError(
            f"--lambdas {text!r}: give start:stop:count (count >= 2, e.g. 0:1:11) or a "
            "comma-separated list (e.g. 0,0.5,1)"
        ) from None


def evaluate_state(model: nn.Module, state: State, data: TaskData, bn: str) -> dict[str, Tensor]:
    """Load ``state``, optionally re-estimate BatchNorm on the training splits, and return the
    logits of every split."""
    model.load_state_dict(state)
    if bn == "recompute":
        recompute_bn(model, torch.cat([s.x for s in data.train.values()]))
    ctx = EvalContext(model.eval(), data, 0)
    return {name: ctx.logits(name) for name in ctx.splits}


def scores(logits: dict[str, Tensor], data: TaskData) -> dict[str, tuple[Tensor, float]]:
    """Per split: per-example correctness and the mean loss."""
    splits = data.splits()
    return {
        name: (correct(lo, splits[name].y), cross_entropy(lo, splits[name].y).item())
        for name, lo in logits.items()
    }


def interpolation_path(
    store: Store,
    run_a: str,
    run_b: str,
    lambdas: list[float],
    data: TaskData | None = None,
    bn: str = "interpolate",
    allow_unrelated: bool = False,
) -> PathResult:
    """Evaluate the linear path from run ``a`` (``lam = 0``) to run ``b`` (``lam = 1``)."""
    if bn not in ("interpolate", "recompute"):
        raise SpecError(f"bn must be 'interpolate' or 'recompute', got {bn!r}")
    try:
        shared = check_shared_init(store, [run_a, run_b])
    except SpecError:
        if not allow_unrelated:
            raise
        shared = "none (unrelated runs, --allow-unrelated)"
    spec_b = finished_spec(store, run_b)
    data = data or build_task_data(spec_b)
    sa, sb = plain_state(store, run_a), plain_state(store, run_b)
    check_same_shapes([sa, sb], [run_a, run_b])
    model = load_into(build_plain(store, spec_b, data.info), sb, f"run {run_b}")
    return path_scores(model, sa, sb, lambdas, data, bn, shared)


def path_scores(
    model: nn.Module,
    sa: State,
    sb: State,
    lambdas: list[float],
    data: TaskData,
    bn: str = "interpolate",
    shared: str = "",
) -> PathResult:
    """Accuracy and loss per split of ``model`` loaded with ``interpolate(sa, sb, lam)`` at each
    ``lam``, with every example's correctness."""
    rows, kept = [], {}
    for lam in lambdas:
        for name, (ok, loss) in scores(
            evaluate_state(model, interpolate(sa, sb, lam), data, bn), data
        ).items():
            rows.append(
                {"lam": lam, "split": name, "accuracy": ok.float().mean().item(), "loss": loss}
            )
            kept.setdefault(name, []).append(ok)
    table = pd.DataFrame(rows)
    return PathResult(list(lambdas), table, {k: torch.stack(v) for k, v in kept.items()}, shared)


def false_false_true(ok: Tensor, index: int) -> float:
    """Share of examples that both ends of the path (rows 0 and -1 of ``ok``) get wrong and the
    point ``index`` gets right: WiSE-FT's "FalseFalseTrue" cases (Lin et al., #16)."""
    both_wrong = ~ok[0] & ~ok[-1]
    return (both_wrong & ok[index]).float().mean().item()


def best_interior(table: pd.DataFrame, split: str, metric: str = "accuracy") -> tuple[float, float]:
    """The interior ``lam`` (not an end) with the highest ``metric`` on ``split``, and its value."""
    rows = table[table["split"] == split].reset_index(drop=True)
    inner = rows.iloc[1:-1]
    if inner.empty:
        raise ValueError("the path has no interior point (give at least three lambdas)")
    best = inner[metric].idxmax()
    return float(rows.loc[best, "lam"]), float(rows.loc[best, metric])


def combination_scores(
    store: Store,
    run_ids: list[str],
    weights: list[float] | None = None,
    data: TaskData | None = None,
    bn: str = "interpolate",
) -> dict[str, float]:
    """Accuracy per split of the weighted average of the runs' weights (uniform by default: a
    uniform soup, ratatouille's final model); the runs must share an initialisation."""
    from genlab.weights.ops import average

    check_shared_init(store, run_ids) if len(run_ids) > 1 else None
    spec = finished_spec(store, run_ids[0])
    data = data or build_task_data(spec)
    states = [plain_state(store, r) for r in run_ids]
    check_same_shapes(states, run_ids)
    model = build_plain(store, spec, data.info)
    logits = evaluate_state(model, average(states, weights), data, bn)
    return {name: ok.float().mean().item() for name, (ok, _) in scores(logits, data).items()}
