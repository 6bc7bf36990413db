"""The Typer application and what every command shares: the store option, JSON output, errors."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from genlab.errors import GenlabError
from genlab.store import Store

app = typer.Typer(
    name="genlab",
    help="A laboratory for how machine-learning models generalize.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
claims_app = typer.Typer(help="Falsifiable claims from the seed papers: list, run, report.")
app.add_typer(claims_app, name="claims")

out = Console(soft_wrap=True)
err = Console(stderr=True)

StoreOpt = Annotated[
    Path | None,
    typer.Option("--store", help="store directory [default: $GENLAB_STORE or ./genlab-runs]"),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="print one JSON document on stdout")]


def open_store(path: Path | None) -> Store:
    return Store(path)


def _clean(obj: Any) -> Any:
    """JSON-safe: NaN/inf become null, paths strings."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "item"):
        return _clean(obj.item())
    return obj


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(_clean(obj), indent=2) + "\n")


def fail(exc: GenlabError) -> None:
    """Print a genlab error for the user and exit with its code (2: bad input, 1: failure)."""
    err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
    raise typer.Exit(exc.exit_code)
