"""``genlab runs`` (filter, sort, choose columns) and ``genlab rm`` (delete runs from the store)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from genlab.cli.app import JsonOpt, StoreOpt, app, emit_json, err, fail, open_store, out
from genlab.errors import GenlabError, SpecError

JSON_KEYS = ("run_id", "status", "step", "wall_s", "task", "model", "method", "seed", "data_seed")


@app.command()
def runs(
    where: Annotated[
        list[str] | None,
        typer.Option(
            "--where",
            "-w",
            help="KEY=VALUE[,VALUE...]: a run field (status), label "
            "(task, model, method, seed) or config key (optimizer.lr, task.p); repeatable",
        ),
    ] = None,
    sort: Annotated[
        str | None,
        typer.Option(help="sort by a field, config key or final metric (test/heldout:accuracy)"),
    ] = None,
    desc: Annotated[bool, typer.Option("--desc", help="largest first")] = False,
    columns: Annotated[
        str | None, typer.Option(help="comma-separated keys to show (as for --where and --sort)")
    ] = None,
    store: StoreOpt = None,
    json_: JsonOpt = False,
) -> None:
    """List the runs in the store: filter with --where, sort by a metric, pick --columns."""
    from genlab import browse

    try:
        rows = browse.run_rows(open_store(store, reading=True).runs())
        known = browse.known_keys(rows)
        rows = browse.select(rows, browse.parse_where(where or [], known))
        if sort:
            rows = browse.sort_rows(rows, browse.check_key(sort, known, "--sort"), desc)
        cols = browse.parse_columns(columns, known)
    except GenlabError as exc:
        fail(exc)
    if json_:
        keys = cols if columns else JSON_KEYS
        emit_json([{k: r.get(k) for k in keys} for r in rows])
        return
    _table(rows, cols)


def _table(rows: list[dict], cols: list[str]) -> None:
    from genlab.browse import cell

    table = Table(show_header=True, header_style="bold")
    for col in cols:
        table.add_column(col, no_wrap=col == "run_id")
    for r in rows:
        table.add_row(*(escape(cell(c, r.get(c))) for c in cols))
    out.print(table)


@app.command()
def rm(
    run_ids: Annotated[list[str] | None, typer.Argument(help="run ids or unique prefixes")] = None,
    failed: Annotated[bool, typer.Option("--failed", help="every failed run")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="delete without asking")] = False,
    store: StoreOpt = None,
) -> None:
    """Delete runs with their metrics, artifacts and folder (all or none). Without --yes, lists
    what would go and asks (or, when not at a terminal, only lists)."""
    try:
        st = open_store(store, reading=True)
        if not run_ids and not failed:
            raise SpecError("name the runs to delete (ids or prefixes), or give --failed")
        ids = [st.resolve(r) for r in run_ids or []]
        if failed:
            df = st.runs(where="status = 'failed'")
            ids += [r for r in df["run_id"] if r not in ids]
    except GenlabError as exc:
        fail(exc)
    if not ids:
        out.print("no runs to delete")
        return
    for rid in ids:
        out.print(f"  {rid}  {st.status(rid)}")
    if not yes:
        if not sys.stdin.isatty():
            err.print(f"would delete {len(ids)} run(s); pass --yes to delete them")
            return
        if not typer.confirm(f"delete these {len(ids)} run(s)?"):
            raise typer.Exit(1)
    try:
        st.delete_runs(ids)
    except GenlabError as exc:
        fail(exc)
    out.print(f"deleted {len(ids)} run(s) from {st.root}")
