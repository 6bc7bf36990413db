"""What ``genlab run`` adds for a continual run (a ``cl_split`` task): the accuracy matrix,
average accuracy, forgetting, backward and forward transfer, and the heat map of R (#120, #95)."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from genlab.analysis.continual import accuracy_matrix, summary
from genlab.store import Store


def show_continual(store: Store, run_id: str, plot: bool) -> tuple[Table, str, Path | None]:
    """The matrix as a table, the summary line, and the heat map's path (registered as the
    run's ``accuracy_matrix`` artifact) when ``plot``."""
    steps = int(store.run(run_id)["spec"]["steps"])
    r, b = accuracy_matrix(store.metrics(run_id), steps)
    table = Table(title="accuracy matrix R[i, j] (after training on i, tested on j)")
    table.add_column("i \\ j")
    for j in range(r.shape[1]):
        table.add_column(str(j), justify="right")
    for i, row in enumerate(r):
        table.add_row(str(i), *(f"{v:.3f}" for v in row))
    s = summary(r, b)
    line = "  ".join(f"{k} {v:.3f}" for k, v in s.items())
    path = None
    if plot:
        from genlab.report.cl_heatmap import plot_accuracy_matrix

        path = plot_accuracy_matrix(r, store.run_dir(run_id) / "accuracy_matrix.png", run_id)
        store.add_artifact(run_id, "accuracy_matrix", path)
    return table, line, path
