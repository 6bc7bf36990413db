"""``genlab --import MODULE|FILE.py COMMAND ...``: load plugins before any command (``genlab.plugins``).

Runs, sweeps and claims then see the plugins' components; every spec that uses one records it
(module and code hash), so its run id follows the plugin's code.
"""

from __future__ import annotations

from typing import Annotated

import typer

from genlab.cli.app import app, fail
from genlab.errors import GenlabError


@app.callback()
def load_plugins(
    imports: Annotated[
        list[str] | None,
        typer.Option("--import", "-I", help="plugin: a module name or a .py file (repeatable)"),
    ] = None,
) -> None:
    """A laboratory for how machine-learning models generalize."""
    from genlab.plugins import load

    try:
        for ref in imports or []:
            load(ref)
    except GenlabError as exc:
        fail(exc)
