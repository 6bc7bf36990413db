"""``genlab claims list|run``: falsifiable claims and their verdicts."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from genlab.cli.app import JsonOpt, StoreOpt, claims_app, emit_json, err, fail, open_store, out
from genlab.cli.user_components import KINDS, claim_axes, with_components
from genlab.errors import GenlabError, SpecError
from genlab.spec import parse_value

COLORS = {"reproduced": "green", "not reproduced": "red", "inconclusive": "yellow"}


def _claims(claim_id: str | None, family: str | None) -> list:
    from genlab.claims import CLAIMS

    if claim_id:
        return [CLAIMS.get(claim_id).obj]
    return [e.obj for e in CLAIMS.entries() if family is None or e.family == family]


@claims_app.command("list")
def list_claims(
    family: Annotated[str | None, typer.Option(help="only this family, e.g. grokking")] = None,
    json_: JsonOpt = False,
) -> None:
    """Every registered claim: id, papers, statement (with --json: measures, guards, controls)."""
    rows = [c.describe() for c in _claims(None, family)]
    if json_:
        emit_json(rows)
        return
    table = Table(show_header=True, header_style="bold")
    for col in ("id", "papers", "statement"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r["id"],
            ", ".join(str(p["row"] or p.get("authors")) for p in r["papers"]),
            escape(r["statement"]),
        )
    out.print(table)


@claims_app.command("show")
def show_claim(
    claim_id: Annotated[str, typer.Argument(help="claim id, e.g. grokking.delayed_generalization")],
    json_: JsonOpt = False,
) -> None:
    """One claim for a person: papers, statement, measures, guards with their levels, controls."""
    try:
        d = _claims(claim_id, None)[0].describe()
    except GenlabError as exc:
        fail(exc)
    if json_:
        emit_json(d)
        return
    out.print(f"[bold]{d['id']}[/] ({d['family']})")
    for p in d["papers"]:
        ref = f"{p.get('authors', '')}, \u201c{p.get('title', '')}\u201d" if "title" in p else ""
        where = f"#{p['row']}" if p.get("row") is not None else "not in the catalogue:"
        out.print(f"  paper {where} {escape(ref)}")
    out.print(f"  [bold]statement[/]: {escape(d['statement'])}")
    note = f" \u2014 {escape(d['scope_note'])}" if d["scope_note"] else ""
    out.print(f"  [bold]scope[/]: {d['scope']}{note}")
    for name, text in d.get("measures", {}).items():
        out.print(f"  [bold]measure[/] {name}: {escape(text)}")
    if "aggregate" in d:
        out.print(f"  [bold]aggregate[/]: {d['aggregate']} over {', '.join(d['replicates'])}")
    for g in d.get("guards", []):
        rest = ", ".join(f"{k}={v}" for k, v in g.items() if k != "kind" and v is not None)
        out.print(f"  [bold]guard[/] {g['kind']}: {escape(rest)}")
    for name, c in d.get("controls", {}).items():
        cost = ", heavy: make test-heavy" if c.get("heavy") else ", slow" if c.get("slow") else ""
        out.print(
            f"  [bold]control[/] {name} ({c['budget']}{cost}, expect {c['expect']}): "
            f"{escape(str(c['overrides']))} \u2014 {escape(c['why'])}"
        )
        if "open" in c:
            out.print(
                f"    [red]history[/]: measured not to come out as expected: {escape(c['open'])}"
            )
    for axis in claim_axes(_claims(claim_id, None)[0]):
        out.print(f"  [bold]your components[/]: --set {escape(axis.text())}")
    out.print(f"  budgets: {escape(str(d['budgets']))}")


@claims_app.command("freeze")
def freeze_claims(
    claim_id: Annotated[str | None, typer.Argument(help="claim id (or --family, or --all)")] = None,
    family: Annotated[str | None, typer.Option(help="only this family")] = None,
    all_: Annotated[bool, typer.Option("--all", help="every registered claim")] = False,
    reason: Annotated[str | None, typer.Option(help="why a frozen design changed")] = None,
    after_result: Annotated[
        bool | None,
        typer.Option(
            "--after-result/--before-result",
            help="whether a result of the old design had been seen (required for a change)",
        ),
    ] = None,
) -> None:
    """Pre-register designs: write each claim's design hash per budget, with today's date, to
    claims.lock; a changed design is recorded with its reason and whether a result was seen."""
    from genlab.claims.freeze import LOCK, freeze

    try:
        if claim_id is None and family is None and not all_:
            raise SpecError("name a claim id, or give --family NAME or --all")
        done = freeze(_claims(claim_id, family), reason, after_result)
    except GenlabError as exc:
        fail(exc)
    out.print(
        f"{LOCK}: {len(done['frozen'])} frozen, {len(done['changed'])} changed "
        f"(recorded), {len(done['unchanged'])} unchanged"
    )
    for key in done["changed"]:
        out.print(f"  changed: {key} \u2014 {escape(reason or '')}")


@claims_app.command("audit")
def audit_claims(
    claim_id: Annotated[str | None, typer.Argument(help="claim id (default: every claim)")] = None,
    family: Annotated[str | None, typer.Option(help="only this family")] = None,
    store: Annotated[
        str | None, typer.Option(help="a store whose measured control verdicts to show")
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Which verdicts each claim can reach on synthetic tables, and whether its controls can fail
    (own runs, not the claim's configuration, sensitive). Exit 1 when a claim breaks a rule."""
    from genlab.claims.audit import audit_claim

    try:
        st = open_store(store, reading=True) if store else None
        rows = [audit_claim(c, st) for c in _claims(claim_id, family)]
    except GenlabError as exc:
        fail(exc)
    if json_:
        emit_json(rows)
    else:
        table = Table(show_header=True, header_style="bold")
        cols = ("id", "scope", "full", "licensed", "smoke", "controls", "problems")
        for col in cols:
            table.add_column(col, no_wrap=col == "id")
        short = {"reproduced": "R", "not reproduced": "NR", "inconclusive": "I"}
        for r in rows:
            reach = {b: "/".join(short[v] for v in vs) for b, vs in r["reachable"].items()}
            ctl = ", ".join(
                n
                + (
                    f" ({'/'.join(short.get(v, '-') for v in c['measured'].values())})"
                    if store
                    else ""
                )
                for n, c in r["controls"].items()
            )
            lic = "/".join(short[v] for v in r["licensable"].get("full", [])) or "none"
            table.add_row(
                r["id"],
                r["scope"],
                reach.get("full", ""),
                lic,
                reach.get("smoke", "") + ("" if r["smoke_decides"] else " (runs only)"),
                escape(ctl),
                escape("; ".join(r["problems"])) or "-",
            )
        out.print(table)
    if any(r["problems"] for r in rows):
        raise typer.Exit(1)


def _arm_labels(c, budget: str, overrides: dict, control: str | None, controls: bool) -> dict:
    """Each run id of the claim's design (and of the controls run first) with its arm's labels,
    in the order they run: what the progress line shows as ``run k/N · labels``."""
    designs = [
        (c.controls[n].budget, {}, n)
        for n in c.applicable_controls(budget)
        if controls and control is None
    ]
    designs.append((budget, overrides, control))
    labels: dict[str, dict] = {}
    for b, over, ctl in designs:
        for a in c.arms(c.config(b, over, ctl)):
            labels.setdefault(a.spec.run_id, a.labels)
    return labels


@claims_app.command("run")
def run_claims(
    claim_id: Annotated[str | None, typer.Argument(help="claim id (or --family, or --all)")] = None,
    family: Annotated[str | None, typer.Option(help="only this family")] = None,
    all_: Annotated[bool, typer.Option("--all", help="every registered claim")] = False,
    control: Annotated[
        str | None,
        typer.Option(
            help="run this control (negative|positive) instead, at its declared budget; "
            "recorded as the control's verdict, not the claim's"
        ),
    ] = None,
    budget: Annotated[str, typer.Option(help="smoke (seconds) or full (minutes)")] = "smoke",
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="config override key=value (repeatable); methods=[erm,NAME] "
            "or models=[...] puts registered components, plugins included, on the "
            "claim's arms (`claims show ID` names the axis)",
        ),
    ] = None,
    store: StoreOpt = None,
    executor: Annotated[
        str, typer.Option("--executor", "-e", help="serial | pool | vmap | ray, for the runs")
    ] = "serial",
    workers: Annotated[
        int | None, typer.Option("--workers", "-w", help="processes (pool) or CPUs (local ray)")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bars")] = False,
    controls: Annotated[
        bool, typer.Option(help="run the controls that license the verdict first (reused once run)")
    ] = True,
    json_: JsonOpt = False,
) -> None:
    """Run claims and print their verdicts with evidence, licensed by their controls' measured
    verdicts (the controls run first). Finished runs and measured controls are reused."""
    from genlab.claims.runner import run_claim, serial
    from genlab.engine.progress import labelled
    from genlab.sweep import make_executor

    try:
        overrides = {}
        for item in set_ or []:
            key, sep, val = item.partition("=")
            if not sep:
                raise SpecError(f"--set {item!r} must look like key=value")
            overrides[key.strip()] = parse_value(val.strip())
        execute = make_executor(executor, workers)  # checks the options before any work
        if executor == "serial":
            execute = serial  # the claim runner's: a bad spec stops everything
        if claim_id is None and family is None and not all_:
            raise SpecError("name a claim id, or give --family NAME or --all")
        claims = _claims(claim_id, family)
        if not claims:
            raise SpecError(f"no claims in family {family!r}")
        components = {k: overrides[k] for k in KINDS if k in overrides}
        if components:  # the user's methods or models on the claim's arms
            if claim_id is None:
                raise SpecError(
                    f"--set {next(iter(components))}=[...] puts your components in "
                    "one claim: name its id"
                )
            claims = [with_components(claims[0], components, budget)]
            overrides.update(claims[0].components)  # type: ignore[attr-defined]
        st = open_store(store)
        for c in claims:  # validate every config and its runs before any work starts
            c.specs(c.config(budget, overrides, control))  # type: ignore[arg-type]
        results = []
        for c in claims:
            at = c.controls[control].budget if control else budget
            if not json_:
                note = f", its declared budget: --budget {budget} ignored" if at != budget else ""
                err.print(
                    f"claim [bold]{c.id}[/]{f' control {control}' if control else ''} ({at}{note})"
                )
            progress = not (quiet or json_)
            with labelled(_arm_labels(c, at, overrides, control, controls)):
                results.append(
                    run_claim(
                        c,
                        st,
                        budget,
                        overrides,
                        progress,
                        execute,
                        control,  # type: ignore[arg-type]
                        controls,
                    )
                )
    except GenlabError as exc:
        fail(exc)
    recorded = not overrides  # a verdict under --set is not the design frozen in claims.lock
    if json_:
        skip = ("table", "runs", "guards", "intervals")
        emit_json(
            [
                {k: v for k, v in r.__dict__.items() if k not in skip}
                | {
                    "table": r.table.to_dict(orient="records"),
                    "guards": [g.__dict__ for g in r.guards],
                    "intervals": [iv.__dict__ for iv in r.intervals],
                    "recorded_design": recorded,
                    "overrides": overrides,
                }
                for r in results
            ]
        )
        return
    for c, r in zip(claims, results, strict=True):
        color = COLORS[r.verdict]
        out.print(f"[bold]{r.claim_id}[/]: [{color}]{r.verdict}[/] (scope: {c.scope})")
        if not recorded:
            given = " ".join(f"{k}={v}" for k, v in overrides.items())
            out.print(
                f"  [yellow]user design[/] ({escape(given)}): not the recorded design in "
                "claims.lock; this verdict speaks for this configuration only"
            )
        out.print(f"  {escape(r.evidence)}")
        if text := c.text(r):
            out.print(text, markup=False, highlight=False)
        if r.controls:
            out.print(
                "  controls: " + ", ".join(f"{n} {v or 'not run'}" for n, v in r.controls.items())
            )
        if r.figure:
            out.print(f"  figure: {r.figure}")
