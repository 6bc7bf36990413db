"""``genlab report SWEEP|RUN...`` and ``genlab claims report``: md, html or latex reports."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer

from genlab.cli.app import StoreOpt, app, claims_app, err, fail, open_store, output_error
from genlab.errors import GenlabError, SpecError
from genlab.report.tables import FORMATS
from genlab.store import Store

FormatOpt = Annotated[str, typer.Option("--format", "-f", help="md | html | latex")]
OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="file to write [default: md/latex to stdout, html to the store's reports/ folder]",
    ),
]


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise SpecError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")


def _reports_dir(store: Store) -> Path:
    """Where a report without ``--out`` keeps its figures (and html): the store's ``reports/``
    folder, or a new temporary folder when the store is read-only (reading never writes there)."""
    if not store.read_only():
        return store.root / "reports"
    tmp = Path(tempfile.mkdtemp(prefix="genlab-report-"))
    err.print(f"note: store {store.root} is read-only; figures go to {tmp}", soft_wrap=True)
    return tmp


def _emit(rep, fmt: str, out: Path | None, default_name: str, store: Store) -> None:
    ext = {"md": "md", "html": "html", "latex": "tex"}[fmt]
    needs_dir = out is None and (fmt == "html" or any(kind == "fig" for kind, _ in rep.blocks))
    reports = _reports_dir(store) if needs_dir else store.root / "reports"
    if out is None and fmt == "html":
        out = reports / f"{default_name}.{ext}"
    base = out.parent if out else reports
    figs = base / f"{out.stem if out else default_name}_figures"
    try:
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
        text = rep.render(fmt, figures_dir=figs, relative_to=base if out else None)  # type: ignore[arg-type]
        if out is not None:
            out.write_text(text)
    except OSError as exc:
        raise output_error(exc, "the report") from None
    if out is None:
        typer.echo(text, nl=False)
        return
    err.print(f"report: {out}")


@app.command()
def report(
    refs: Annotated[list[str], typer.Argument(help="a sweep id or name, or run ids (prefixes)")],
    fmt: FormatOpt = "md",
    out: OutOpt = None,
    store: StoreOpt = None,
) -> None:
    """Tables with CIs over seeds, worst environments, paired tests, curves and bars."""
    from genlab.report.sweep_report import build_report

    try:
        _check_format(fmt)
        st = open_store(store, reading=True)
        sweep = st.sweep(refs[0]) if len(refs) == 1 else None
        if sweep is not None:
            ids, title, name = (
                [r["run_id"] for r in sweep["runs"]],
                f"sweep {sweep['name']}",
                sweep["name"],
            )
            ids = [i for i in ids if st.status(i) is not None]
            if not ids:
                raise SpecError(f"sweep {sweep['name']!r} has no runs in the store yet")
        else:
            try:
                ids = [st.resolve(r) for r in refs]
            except GenlabError:
                raise SpecError(
                    f"no sweep or run matching {' '.join(refs)!r} in {st.root}"
                ) from None
            title, name = f"runs {', '.join(i[:8] for i in ids)}", f"runs-{ids[0][:8]}"
        rep = build_report(st, ids, title)
        _emit(rep, fmt, out, name, st)
    except GenlabError as exc:
        fail(exc)


@claims_app.command("report")
def claims_report(
    family: Annotated[str | None, typer.Option(help="only this family")] = None,
    fmt: FormatOpt = "md",
    out: OutOpt = None,
    store: StoreOpt = None,
) -> None:
    """Every claim with its latest verdict, evidence, figure and the papers it cites."""
    from genlab.claims import CLAIMS
    from genlab.report.claims_report import build_claims_report

    try:
        _check_format(fmt)
        st = open_store(store, reading=True)
        rep = build_claims_report(st, CLAIMS.entries(), family)
        _emit(rep, fmt, out, f"claims-{family or 'all'}", st)
    except GenlabError as exc:
        fail(exc)
