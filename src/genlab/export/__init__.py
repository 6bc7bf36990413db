"""Export runs to the tools researchers track with: MLflow (``genlab[mlflow]``) and TensorBoard
(``genlab[tensorboard]``). What goes out is the store's own content: the spec (flattened into
params), every evaluation's metrics at their steps, status and timings, and the run's artifacts.

``genlab export RUN|SWEEP --mlflow DIR --tensorboard DIR``; a sweep exports all its runs, labelled
with the sweep's axes.

Floor: above the store; used by the CLI.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from genlab.errors import SpecError
from genlab.store import Store


@dataclass
class ExportRun:
    """One run as exported: its store row, flat params, labels (sweep axes), long metrics."""

    run_id: str
    row: dict[str, Any]
    params: dict[str, str]
    labels: dict[str, Any]
    metrics: pd.DataFrame
    artifacts: dict[str, str] = field(default_factory=dict)


def flat_params(spec: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """``{"task.name": "colored_digits", "optimizer.lr": "0.001", ...}`` (lists as JSON)."""
    out: dict[str, str] = {}
    for k, v in spec.items():
        if isinstance(v, dict):
            out.update(flat_params(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = (
                json.dumps(v) if isinstance(v, list | bool) or v is None else str(v)
            )
    return out


def collect(store: Store, ref: str) -> tuple[str, list[ExportRun]]:
    """A sweep (id, id prefix or name) or a run (id or unique prefix): its name and its runs."""
    sweep = store.sweep(ref)
    if sweep is not None:
        labelled = [
            (r["run_id"], r["labels"])
            for r in sweep["runs"]
            if store.status(r["run_id"]) is not None
        ]
        if not labelled:
            raise SpecError(f"sweep {sweep['name']!r} has no runs in the store yet")
        name = sweep["name"]
    else:
        try:
            labelled = [(store.resolve(ref), {})]
        except Exception:  # noqa: BLE001 - StoreError: neither a sweep nor a run
            raise SpecError(f"no sweep or run matching {ref!r} in {store.root}") from None
        name = "genlab"
    out = []
    for rid, labels in labelled:
        row = store.run(rid)
        out.append(
            ExportRun(
                rid, row, flat_params(row["spec"]), labels, store.metrics(rid), store.artifacts(rid)
            )
        )
    return name, out


def need(module: str, extra: str) -> Any:
    """Import an optional dependency, or say which extra installs it (exit code 2)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise SpecError(
            f"this export needs {module.split('.')[0]}: pip install 'genlab[{extra}]'"
        ) from None


def export(store: Store, ref: str, mlflow: Any = None, tensorboard: Any = None) -> dict[str, Any]:
    """``genlab export REF --mlflow DIR --tensorboard DIR``: what was written, per target."""
    name, runs = collect(store, ref)
    out: dict[str, Any] = {"name": name, "runs": len(runs)}
    if mlflow is not None:
        from genlab.export.mlflow import export_mlflow

        out["mlflow"] = export_mlflow(runs, name, mlflow)
    if tensorboard is not None:
        from genlab.export.tensorboard import export_tensorboard

        out["tensorboard"] = export_tensorboard(runs, tensorboard)
    return out
