"""``genlab run``, ``show``, ``export`` and ``plot``: one run and what the store holds of it."""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from genlab.cli.app import (
    JsonOpt,
    StoreOpt,
    app,
    emit_json,
    err,
    fail,
    open_store,
    out,
    output_error,
)
from genlab.errors import GenlabError
from genlab.report.plots import plot_curves
from genlab.store import Store


def _show_warning(message: Warning | str, *_: object, **__: object) -> None:
    err.print(f"[yellow]warning:[/] {escape(str(message))}", highlight=False)


def _plot(store: Store, run_id: str, path: Path | None = None) -> Path:
    """Draw a run's learning curves into ``path`` (default the run's folder) and record them as
    its ``curves`` artifact. A read-only store records nothing: without ``path`` the figure
    already drawn is kept, or a new one goes to a temporary folder."""
    metrics = store.metrics(run_id)
    spec = store.run(run_id)["spec"]
    title = f"{spec['task']['name']} · {spec['model']['name']} · {run_id}"
    read_only = store.read_only()
    if read_only and path is None:
        drawn = store.artifacts(run_id).get("curves")
        if drawn and Path(drawn).is_file():
            return Path(drawn)
        path = Path(tempfile.mkdtemp(prefix="genlab-plot-")) / "curves.png"
    try:
        path = plot_curves(metrics, path or store.run_dir(run_id) / "curves.png", title)
    except OSError as exc:
        raise output_error(exc, "the plot") from None
    if not read_only:
        store.add_artifact(run_id, "curves", path)
    return path


def worst_environments(final: dict[str, float], metric: str = "accuracy") -> list[str]:
    """Per role with two or more environments: the mean and the worst one, e.g.
    ``test accuracy: mean 0.512, worst 0.104 (test/-90%)``."""
    by_role: dict[str, dict[str, float]] = {}
    for key, value in final.items():
        split, _, m = key.rpartition(":")
        if m == metric and "/" in split:
            by_role.setdefault(split.split("/")[0], {})[split] = value
    lines = []
    for role, envs in by_role.items():
        if len(envs) >= 2:
            worst = min(envs, key=envs.__getitem__)
            mean = sum(envs.values()) / len(envs)
            lines.append(f"{role} {metric}: mean {mean:.3f}, worst {envs[worst]:.3f} ({worst})")
    return lines


def _final_table(final: dict[str, float], title: str) -> Table:
    caption = "\n".join(worst_environments(final)) or None
    table = Table(title=title, caption=caption, show_header=True, header_style="bold")
    table.add_column("split")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in sorted(final.items()):
        split, _, metric = key.rpartition(":")
        table.add_row(split, metric, f"{value:.4g}")
    return table


@app.command()
def run(
    ref: Annotated[str, typer.Argument(help="preset name (see `genlab list presets`) or a file")],
    overrides: Annotated[
        list[str] | None, typer.Argument(help="key.path=value, e.g. task.p=31 optimizer.lr=3e-3")
    ] = None,
    store: StoreOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
    no_plot: Annotated[bool, typer.Option("--no-plot", help="skip the figure")] = False,
    wait: Annotated[
        bool, typer.Option("--wait", help="if another process is training this run, wait for it")
    ] = False,
    restart: Annotated[
        bool, typer.Option("--restart", help="train from step 0, replacing the run's metrics")
    ] = False,
    threads: Annotated[
        int | None, typer.Option(help="torch threads [default: $GENLAB_THREADS, else by size]")
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Train a preset or a spec file, with overrides; resume it if it was interrupted."""
    from genlab.engine import run_spec
    from genlab.engine.checkpoint import CheckpointWarning
    from genlab.spec import load_run_spec

    try:
        spec = load_run_spec(ref, overrides or [])
        if spec.fed is not None:  # a federated run needs the genlab[fl] extra: say so up front
            from genlab.fed.flower import require_flwr

            require_flwr()
        st = open_store(store)
        if not json_:
            err.print(f"run [bold]{spec.run_id}[/] → {st.root}")
        with warnings.catch_warnings():
            warnings.simplefilter("always", CheckpointWarning)
            warnings.showwarning = _show_warning
            result = run_spec(
                spec, st, progress=not (quiet or json_), wait=wait, restart=restart, threads=threads
            )
        plot = None if no_plot or result.status == "diverged" else _plot(st, result.run_id)
    except GenlabError as exc:
        fail(exc)
    if json_:
        emit_json({**result.__dict__, "plot": plot})
        return
    note = " (already done; nothing trained)" if result.skipped else ""
    if result.resumed_from:
        note = f" (resumed from step {result.resumed_from})"
    out.print(
        _final_table(
            result.final,
            f"{result.run_id}: {result.status} at step {result.step} in {result.wall_s:.1f}s{note}",
        )
    )
    if plot:
        out.print(f"plot: {plot}")
    if spec.task.name == "cl_split" and result.status == "done":
        from genlab.cli.continual import show_continual

        table, line, heat = show_continual(st, result.run_id, not no_plot)
        out.print(table, line)
        if heat:
            out.print(f"heat map: {heat}")
    if result.status != "done":
        raise typer.Exit(1)


@app.command()
def show(
    run_id: Annotated[str, typer.Argument(help="run id or a unique prefix")],
    store: StoreOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Summary of one run: status, spec, final metrics, artifacts."""
    try:
        st = open_store(store, reading=True)
        rid = st.resolve(run_id)
        row = st.run(rid)
        row["artifacts"] = st.artifacts(rid)
    except GenlabError as exc:
        fail(exc)
    if json_:
        emit_json(row)
        return
    spec = row["spec"]
    out.print(f"[bold]{rid}[/]  {row['status']} at step {row['step']}  ({row['wall_s']:.1f}s)")
    out.print(f"task   {spec['task']['name']} {spec['task']['params']}")
    out.print(f"model  {spec['model']['name']} {spec['model']['params']}")
    out.print(f"method {spec['method']['name']}  optimizer {spec['optimizer']}")
    out.print(
        f"steps {spec['steps']}  batch {spec['batch_size']}  seed {spec['seed']}  "
        f"data_seed {spec['data_seed']}"
    )
    if row["error"]:
        out.print(f"[red]error:[/] {row['error'].strip().splitlines()[-1]}")
    if row["summary"].get("final"):
        out.print(_final_table(row["summary"]["final"], "last evaluation"))
    for name, path in row["artifacts"].items():
        out.print(f"{name}: {path}")


@app.command()
def export(
    run_id: Annotated[
        str,
        typer.Argument(
            help="run id or a unique prefix (or, with --mlflow / --tensorboard, a sweep id or name)"
        ),
    ],
    store: StoreOpt = None,
    csv: Annotated[bool, typer.Option("--csv", help="CSV (the default)")] = True,
    output: Annotated[
        Path | None, typer.Option("--out", "-o", help="file (default stdout)")
    ] = None,
    mlflow: Annotated[
        Path | None, typer.Option(help="MLflow tracking folder (genlab[mlflow])")
    ] = None,
    tensorboard: Annotated[Path | None, typer.Option(help="TensorBoard log folder")] = None,
) -> None:
    """Export a run's long-format metrics (run_id, step, split, metric, value) as CSV, or runs and
    sweeps with params, step-wise metrics and artifacts to MLflow or TensorBoard."""
    if mlflow or tensorboard:
        from genlab.export import export as export_to

        try:
            done = export_to(open_store(store, reading=True), run_id, mlflow, tensorboard)
        except GenlabError as exc:
            fail(exc)
        emit_json(done)
        return
    try:
        st = open_store(store, reading=True)
        df = st.metrics(st.resolve(run_id))
    except GenlabError as exc:
        fail(exc)
    text = df.to_csv(index=False)
    if output:
        try:
            output.write_text(text)
        except OSError as exc:
            fail(output_error(exc, "the CSV"))
        err.print(f"wrote {len(df)} rows to {output}")
    else:
        typer.echo(text, nl=False)


@app.command()
def plot(
    run_id: Annotated[str, typer.Argument(help="run id or a unique prefix")],
    store: StoreOpt = None,
    output: Annotated[Path | None, typer.Option("--out", "-o", help="PNG path")] = None,
) -> None:
    """Redraw a run's learning curves (accuracy and loss per split, log step axis)."""
    try:
        st = open_store(store, reading=True)
        path = _plot(st, st.resolve(run_id), output)
    except GenlabError as exc:
        fail(exc)
    out.print(f"plot: {path}")
