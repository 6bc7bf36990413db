"""Runs as TensorBoard event files: ``DIR/<run_id>/events.out.tfevents.*``, one folder per run so
TensorBoard lists them side by side (``tensorboard --logdir DIR``).

Each ``(split, metric)`` is the scalar tag ``split/metric`` at every evaluated step, written in
double precision (TensorBoard's new-style scalar summaries) so the values read back equal the
store's; the spec and the sweep labels are a text summary ``genlab/spec``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from genlab.export import ExportRun, need


def export_tensorboard(runs: list[ExportRun], directory: Path) -> list[dict[str, Any]]:
    """Write one event-file folder per run under ``directory``; per run ``{"run_id", "path"}``."""
    need("tensorboard", "tensorboard")
    from torch.utils.tensorboard import SummaryWriter

    done = []
    for run in runs:
        path = directory / run.run_id
        for old in path.glob("events.out.tfevents.*"):  # exporting again replaces, not appends
            old.unlink()
        start = run.row["started"] or run.row["created"] or 0.0
        with SummaryWriter(log_dir=str(path)) as writer:
            text = json.dumps(
                {"run_id": run.run_id, "labels": run.labels, "spec": run.row["spec"]},
                indent=2,
                sort_keys=True,
            )
            writer.add_text("genlab/spec", f"```\n{text}\n```", 0, walltime=start)
            for step, split, metric, value in run.metrics[
                ["step", "split", "metric", "value"]
            ].itertuples(index=False):
                writer.add_scalar(
                    f"{split}/{metric}",
                    float(value),
                    int(step),
                    walltime=start,
                    new_style=True,
                    double_precision=True,
                )
        done.append({"run_id": run.run_id, "path": str(path)})
    return done
