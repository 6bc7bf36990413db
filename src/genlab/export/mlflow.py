"""Runs into an MLflow tracking directory: ``DIR/mlflow.db`` (SQLite backend, which MLflow 3
recommends over the old file store) and ``DIR/artifacts``; browse with
``mlflow ui --backend-store-uri sqlite:///DIR/mlflow.db``.

Per genlab run, one MLflow run in the experiment named after the sweep (``genlab`` for a single
run): params = the flattened spec; tags = genlab run id, status, host, version, sweep labels;
metrics = every ``(split, metric)`` at every evaluated step, keyed ``split/metric`` with characters
MLflow does not allow replaced (``test/+90%`` -> ``test/plus90pct``); the exact key map is the
artifact ``genlab/metric_keys.json``; artifacts = ``genlab/spec.json`` and the run's files.
Exporting a run that the experiment already holds (tag ``genlab.run_id``) skips it.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

from genlab.export import ExportRun, need

TAG = "genlab.run_id"
_REPLACE = {"%": "pct", "+": "plus", "=": "eq", ",": "_", ":": "_", "[": "(", "]": ")"}


def tracking_uri(directory: Path) -> str:
    return f"sqlite:///{directory.resolve() / 'mlflow.db'}"


def metric_key(split: str, metric: str) -> str:
    """An MLflow-legal key (letters, digits, ``_-. /``) for a genlab split and metric."""
    raw = f"{split}/{metric}"
    key = "".join(_REPLACE.get(c, c) for c in raw)
    return re.sub(r"[^A-Za-z0-9_\-. /()]", "_", key).replace("(", "_").replace(")", "_")


def key_map(run: ExportRun) -> dict[str, list[str]]:
    """MLflow key -> ``[split, metric]``, unique (a clash gets a numeric suffix)."""
    out: dict[str, list[str]] = {}
    for split, metric in run.metrics[["split", "metric"]].drop_duplicates().itertuples(index=False):
        key, n = metric_key(split, metric), 1
        while key in out:
            n += 1
            key = f"{metric_key(split, metric)}_{n}"
        out[key] = [split, metric]
    return out


def export_mlflow(runs: list[ExportRun], experiment: str, directory: Path) -> list[dict[str, Any]]:
    """Write ``runs`` into ``directory``; per run ``{"run_id", "mlflow_run_id", "skipped"}``."""
    tracking = need("mlflow.tracking", "mlflow")
    entities = need("mlflow.entities", "mlflow")
    directory.mkdir(parents=True, exist_ok=True)
    client = tracking.MlflowClient(tracking_uri=tracking_uri(directory))
    exp = client.get_experiment_by_name(experiment)
    exp_id = (
        exp.experiment_id
        if exp
        else client.create_experiment(
            experiment, artifact_location=(directory.resolve() / "artifacts").as_uri()
        )
    )
    done = []
    for run in runs:
        found = client.search_runs([exp_id], f"tags.`{TAG}` = '{run.run_id}'", max_results=1)
        if found:
            done.append(
                {"run_id": run.run_id, "mlflow_run_id": found[0].info.run_id, "skipped": True}
            )
            continue
        row = run.row
        tags = {
            TAG: run.run_id,
            "genlab.status": row["status"],
            "genlab.host": str(row["host"]),
            "genlab.version": str(row["version"]),
            **{f"genlab.label.{k}": json.dumps(v) for k, v in run.labels.items()},
        }
        start_ms = int((row["started"] or row["created"] or 0) * 1000)
        mrun = client.create_run(exp_id, start_time=start_ms, tags=tags, run_name=run.run_id)
        rid = mrun.info.run_id
        params = [entities.Param(k, v) for k, v in run.params.items()]
        keys = key_map(run)
        back = {tuple(v): k for k, v in keys.items()}
        metrics = [
            entities.Metric(back[(s, m)], float(v), start_ms, int(step))
            for step, s, m, v in run.metrics[["step", "split", "metric", "value"]].itertuples(
                index=False
            )
        ]
        for i in range(0, len(params), 100):  # MLflow's limits per batch: 100 params,
            client.log_batch(rid, params=params[i : i + 100])
        for i in range(0, len(metrics), 1000):  # 1000 metrics
            client.log_batch(rid, metrics=metrics[i : i + 1000])
        with tempfile.TemporaryDirectory() as tmp:
            meta = Path(tmp) / "genlab"
            meta.mkdir()
            (meta / "spec.json").write_text(json.dumps(row["spec"], indent=2, sort_keys=True))
            (meta / "metric_keys.json").write_text(json.dumps(keys, indent=2, sort_keys=True))
            client.log_artifacts(rid, str(meta), "genlab")
        for name, path in run.artifacts.items():
            if Path(path).is_file():
                client.log_artifact(rid, path, f"artifacts/{name}")
        status = {"done": "FINISHED", "running": "RUNNING"}.get(row["status"], "FAILED")
        end = row["finished"] or row["started"]
        client.set_terminated(rid, status, int(end * 1000) if end else None)
        done.append({"run_id": run.run_id, "mlflow_run_id": rid, "skipped": False})
    return done
