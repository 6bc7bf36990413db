"""``genlab list`` and ``genlab papers``: what is registered, and which papers it covers."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from genlab.cli.app import JsonOpt, app, emit_json, out


class Kind(StrEnum):
    tasks = "tasks"
    models = "models"
    methods = "methods"
    probes = "probes"
    claims = "claims"
    presets = "presets"


def listing(kind: str) -> list[dict]:
    """Rows for ``genlab list KIND``: name, one-line doc, params with defaults, papers."""
    from genlab.coverage import registries
    from genlab.spec import preset_description, preset_names

    if kind == "presets":
        return [{"name": n, "doc": preset_description(n)} for n in preset_names()]
    reg = registries()[kind.rstrip("s")]
    return [
        {
            "name": e.name,
            "doc": e.summary,
            "params": e.defaults(),
            "papers": list(e.papers),
            "family": e.family,
        }
        for e in reg.entries()
    ]


@app.command("list")
def list_(
    kind: Annotated[Kind | None, typer.Argument(help="what to list (default: everything)")] = None,
    json_: JsonOpt = False,
) -> None:
    """List registered tasks, models, methods, probes, claims or presets."""
    kinds = [kind.value] if kind else [k.value for k in Kind]
    data = {k: listing(k) for k in kinds}
    if json_:
        emit_json(data if kind is None else data[kind.value])
        return
    for k, rows in data.items():
        table = Table(title=k, show_header=True, header_style="bold", title_justify="left")
        table.add_column("name", style="bold")
        table.add_column("what it is")
        table.add_column("params (defaults)")
        table.add_column("papers")
        for r in rows:
            params = ", ".join(f"{p}={v}" for p, v in r.get("params", {}).items())
            papers_ = ", ".join(map(str, r.get("papers", [])))
            table.add_row(r["name"], escape(r["doc"]), escape(params), papers_)
        out.print(table)


@app.command()
def papers(
    family: Annotated[str | None, typer.Option(help="only this family, e.g. grokking")] = None,
    covered: Annotated[bool, typer.Option("--covered", help="only papers genlab covers")] = False,
    json_: JsonOpt = False,
) -> None:
    """The 120 seed papers: number, name, family, tier, and the components and claims citing each."""
    from genlab.coverage import catalogue

    rows = [
        p.__dict__
        for p in catalogue().values()
        if (family is None or family.lower() in p.family.lower())
        and (not covered or p.components or p.claims)
    ]
    if json_:
        emit_json(rows)
        return
    table = Table(show_header=True, header_style="bold")
    for col in ("#", "paper", "family", "tier", "components", "claims"):
        table.add_column(col)
    for p in rows:
        table.add_row(
            str(p["number"]),
            escape(p["name"]),
            p["family"],
            p["tier"],
            ", ".join(p["components"]),
            ", ".join(p["claims"]),
        )
    out.print(table)
    n_cov = sum(1 for p in rows if p["components"] or p["claims"])
    out.print(f"{len(rows)} papers, {n_cov} covered by a component or claim")
