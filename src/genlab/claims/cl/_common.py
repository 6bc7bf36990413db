"""What the continual claims share: the ``cl-split-digits`` preset on a scenario, and the measures
read from each run's accuracy matrix R (``genlab.analysis.continual``, Avalanche's definitions)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from genlab.analysis.continual import accuracy_matrix, run_summary
from genlab.claims.measures import Derived
from genlab.registry import Params
from genlab.spec import load_spec_file


class ContinualConfig(Params):
    """Scenario, single-model width, budget and seeds of a continual comparison."""

    variant: Literal["split", "permuted", "rotated"] = "permuted"
    scenario: Literal["class", "task"] = "task"
    experiences: int = Field(5, ge=2)
    max_angle: float = Field(90.0, ge=0, le=360)
    shots: int | None = Field(None, ge=1)
    width: int = Field(100, ge=1, description="hidden width of the single-model arms")
    steps: int = Field(1500, ge=2, description="over the whole sequence")
    lrs: list[float] = Field([1e-3, 3e-3], min_length=1, description="each arm at its best")
    seeds: int = Field(5, ge=3)


def continual_base(cfg: ContinualConfig) -> dict[str, Any]:
    """The ``cl-split-digits`` preset on ``cfg``'s scenario, width and budget (the learning rate
    is an axis: ``lr_axis``)."""
    base = load_spec_file("cl-split-digits")
    base["task"]["params"].update(
        variant=cfg.variant,
        scenario=cfg.scenario,
        experiences=cfg.experiences,
        max_angle=cfg.max_angle,
        shots=cfg.shots,
    )
    base["model"]["params"]["width"] = cfg.width
    base["steps"] = cfg.steps
    return base


def _learned(m, first: int = 0) -> float:
    r, _ = accuracy_matrix(m)
    return float(np.mean(np.diag(r)[first:])) if len(r) > first else float("nan")


MEASURES = {
    "avg_accuracy": Derived(
        lambda m: run_summary(m)["avg_accuracy"],
        "mean over experiences j of R[T-1, j] (Avalanche's stream accuracy)",
    ),
    "forgetting": Derived(
        lambda m: run_summary(m)["forgetting"],
        "mean over j < T-1 of R[j, j] - R[T-1, j] (Avalanche's forgetting)",
    ),
    "learned": Derived(_learned, "mean over j of R[j, j]: each experience just after learning it"),
}


INCOMING = Derived(
    lambda m: _learned(m, first=1),
    "mean over j >= 1 of R[j, j]: each new experience just after learning it (few-shot "
    "generalization on incoming tasks)",
)


def lr_axis(cfg: ContinualConfig) -> dict[str, dict[str, float]]:
    """The learning-rate axis (label ``lr``)."""
    return {"lr": {lr: {"optimizer.lr": lr} for lr in cfg.lrs}}


def at_best(table, measure: str = "avg_accuracy", over: tuple[str, ...] = ("lr",)):
    """Per seed (rows) and method (columns): ``measure`` at the method's best setting of the
    ``over`` labels, the one with the highest mean average accuracy over seeds (the same oracle
    selection for every arm); also the chosen setting per method."""
    means = table.groupby(["method", *over])["avg_accuracy"].mean()
    best = {m: means[m].idxmax() for m in table["method"].unique()}
    key = table[list(over)].apply(lambda r: r.iloc[0] if len(over) == 1 else tuple(r), axis=1)
    rows = table[[best[m] == k for m, k in zip(table["method"], key, strict=True)]]
    return rows.pivot_table(index="seed", columns="method", values=measure), best
