"""``genlab sweep FILE`` or ``genlab sweep PRESET key=a,b seed=0..2``: expand a sweep (a file, or
axes on the command line: ``genlab.sweep.multirun``) and train what the store does not hold yet."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from genlab.cli.app import JsonOpt, StoreOpt, app, emit_json, err, fail, open_store, out
from genlab.errors import GenlabError, SpecError


@app.command()
def sweep(
    file: Annotated[
        str, typer.Argument(help="sweep file (.toml or .json), or with AXES a preset or run spec")
    ],
    axes: Annotated[
        list[str] | None,
        typer.Argument(
            help="key=a,b,c or key=0..4 (a grid axis), key=value (an override), "
            "seed=0..2 (the seeds); e.g. method.name=erm,mixup seed=0..2",
            show_default=False,
        ),
    ] = None,
    executor: Annotated[
        str, typer.Option("--executor", "-e", help="serial | pool | vmap | ray")
    ] = "serial",
    workers: Annotated[
        int | None, typer.Option("--workers", "-w", help="processes (pool) or CPUs (local ray)")
    ] = None,
    address: Annotated[
        str | None, typer.Option("--address", help="Ray cluster address (ray executor)")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="list the runs, train nothing")
    ] = False,
    store: StoreOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bars")] = False,
    json_: JsonOpt = False,
) -> None:
    """Run a sweep (grid and random axes x seeds); finished runs are skipped, dead ones resumed.
    Without a file, a preset and key=values name a grid: the same command resumes it."""
    from genlab.sweep import load_sweep, make_executor, multirun, plan, run_sweep
    from genlab.sweep.multirun import check

    try:
        if axes:
            spec, root = multirun(file, axes), Path.cwd()
            check(spec, root)  # each override and axis value, named when it is bad
        elif not Path(file).is_file() and not file.endswith((".toml", ".json")):
            raise SpecError(
                f"no sweep file {file!r}; for a sweep of a preset give its axes, "
                f"e.g. genlab sweep {file} method.name=erm,mixup seed=0..2"
            )
        else:
            spec, root = load_sweep(file)
        execute = make_executor(executor, workers, address)  # checks options before any work
        planned = plan(spec, root)
        if dry_run:
            rows = [{"run_id": p["run_id"], **p["labels"]} for p in planned]
            if json_:
                emit_json({"sweep_id": spec.sweep_id, "name": spec.name, "runs": rows})
            else:
                out.print(f"sweep {spec.name} ({spec.sweep_id}): {len(rows)} runs")
                for r in rows:
                    out.print("  " + "  ".join(f"{k}={v}" for k, v in r.items()))
            return
        st = open_store(store)
        if not json_:
            err.print(
                f"sweep [bold]{spec.name}[/] ({spec.sweep_id}): {len(planned)} runs, "
                f"executor {executor} → {st.root}"
            )
        result = run_sweep(spec, st, execute, root, progress=not (quiet or json_))
    except GenlabError as exc:
        fail(exc)
    counts = result.counts()
    if json_:
        emit_json(
            {
                "sweep_id": result.sweep_id,
                "name": result.name,
                "counts": counts,
                "runs": [o.__dict__ for o in result.outcomes],
            }
        )
    else:
        table = Table(title=f"sweep {result.name} ({result.sweep_id})", header_style="bold")
        table.add_column("status")
        table.add_column("runs", justify="right")
        for k, v in sorted(counts.items()):
            table.add_row(k, str(v))
        out.print(table)
        for o in result.outcomes:
            if o.error and o.status in ("failed", "busy"):
                out.print(f"[red]{o.run_id}[/] {o.status}: {o.error.strip().splitlines()[-1]}")
        out.print(f"report: genlab report {result.sweep_id}")
    if counts.get("failed"):
        raise typer.Exit(1)
