"""The ``genlab`` command. Each module of this package adds its commands to ``app``.

Floor: the top, beside the API; the only package that imports the conformance kit.
"""

from __future__ import annotations

import importlib
import pkgutil

from genlab.cli.app import app

for _mod in pkgutil.iter_modules(__path__):
    if _mod.name != "app" and not _mod.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_mod.name}")


def main() -> None:
    app()


__all__ = ["app", "main"]
