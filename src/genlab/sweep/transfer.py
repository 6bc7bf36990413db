"""Move finished runs between stores as plain data: what a remote worker sends back to the driver.

``export_runs`` reads runs (row, long-format metrics, final model file) out of a worker's scratch
store; ``import_runs`` writes them into the driver's store through its ordinary methods.
"""

from __future__ import annotations

from typing import Any

from genlab.engine import checkpoint
from genlab.store import Store
from genlab.sweep.base import Outcome


def export_runs(store: Store, run_ids: list[str]) -> list[dict[str, Any]]:
    """One picklable dict per run that ``store`` holds (ids it lacks are left out)."""
    out = []
    for rid in run_ids:
        if store.status(rid) is None:
            continue
        row = store.run(rid)
        metrics = store.metrics(rid)
        final = store.run_dir(rid) / checkpoint.FINAL
        out.append(
            {
                "run_id": rid,
                "spec": row["spec"],
                "status": row["status"],
                "step": int(row["step"]),
                "wall_s": float(row["wall_s"]),
                "error": row["error"],
                "summary": row["summary"],
                "metrics": list(
                    metrics[["step", "split", "metric", "value"]].itertuples(False, None)
                ),
                "files": {checkpoint.FINAL: final.read_bytes()} if final.is_file() else {},
            }
        )
    return out


def import_runs(store: Store, payloads: list[dict[str, Any]]) -> list[Outcome]:
    """Write exported runs into ``store``; a run it already holds as ``done`` is left alone."""
    import json

    outcomes = []
    for p in payloads:
        rid = p["run_id"]
        if store.status(rid) == "done":
            outcomes.append(Outcome(rid, "skipped"))
            continue
        store.begin(rid, json.dumps(p["spec"], sort_keys=True, separators=(",", ":")))
        store.drop_metrics_after(rid, -1)
        store.log_metrics(rid, p["metrics"])
        for name, data in p["files"].items():
            path = store.run_dir(rid) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        store.finish(rid, p["status"], p["step"], p["wall_s"], p["error"], p["summary"])
        outcomes.append(Outcome(rid, p["status"], p["error"]))
    return outcomes
