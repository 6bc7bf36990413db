"""Run a sweep: expand, record it in the store, hand the missing runs to an executor, summarise."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genlab.engine.progress import labelled
from genlab.store import Store
from genlab.sweep.base import Executor, Outcome
from genlab.sweep.spec import SweepSpec


@dataclass
class SweepResult:
    """The sweep's id and name, its runs with their labels, and how each run ended."""

    sweep_id: str
    name: str
    runs: list[dict[str, Any]]
    outcomes: list[Outcome] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return dict(Counter(o.status for o in self.outcomes))


def plan(sweep: SweepSpec, root: Path | None = None) -> list[dict[str, Any]]:
    """Expand and validate: ``{"run_id", "labels", "spec"}`` per run. Raises SpecError, writes nothing."""
    return [{"run_id": s.run_id, "labels": labels, "spec": s} for labels, s in sweep.expand(root)]


def run_sweep(
    sweep: SweepSpec,
    store: Store,
    execute: Executor,
    root: Path | None = None,
    progress: bool = True,
) -> SweepResult:
    """Expand ``sweep``, record it, and train what the store does not hold yet."""
    planned = plan(sweep, root)
    runs = [{"run_id": p["run_id"], "labels": p["labels"]} for p in planned]
    store.save_sweep(sweep.sweep_id, sweep.name, sweep.model_dump(mode="json"), runs)
    with labelled({p["run_id"]: p["labels"] for p in planned}):  # "run k/N · labels" lines
        outcomes = execute([p["spec"] for p in planned], store, progress)
    return SweepResult(sweep.sweep_id, sweep.name, runs, outcomes)
