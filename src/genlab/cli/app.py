"""The Typer application and what every command shares: the store option, JSON output, errors."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from genlab.errors import GenlabError, SpecError, StoreError
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


def open_store(path: Path | str | None, reading: bool = False) -> Store:
    """The store at ``path`` (default ``$GENLAB_STORE`` or ``./genlab-runs``). A reading command
    (``reading=True``) refuses a store named by ``--store`` or ``$GENLAB_STORE`` that does not
    exist, rather than show it as empty; the default folder may be absent (a fresh checkout)."""
    store = Store(path)
    named = path is not None or bool(os.environ.get("GENLAB_STORE"))
    if reading and named and not store.db_path.exists():
        source = "--store" if path is not None else "$GENLAB_STORE"
        what = "does not exist" if not store.root.exists() else f"holds no {store.db_path.name}"
        raise StoreError(f"no genlab store at {store.root} ({source}): the folder {what}")
    return store


def output_error(exc: OSError, what: str) -> SpecError:
    """An output path that cannot be written, as one line naming it (exit code 2)."""
    if exc.filename is None:
        return SpecError(f"cannot write {what}: {exc.strerror or exc}")
    path = Path(exc.filename)
    in_the_way = next((p for p in (path, *path.parents) if p.is_file()), None)
    if isinstance(exc, FileExistsError | NotADirectoryError) and in_the_way is not None:
        return SpecError(f"cannot write {what}: {in_the_way} is a file, not a folder")
    return SpecError(f"cannot write {what}: {exc.strerror or exc} ({path})")


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
    err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
    raise typer.Exit(exc.exit_code)
