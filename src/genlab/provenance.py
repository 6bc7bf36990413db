"""Provenance: what produced a result — genlab version, git commit, torch and Python versions, host,
start and wall time, command line. Recorded with each claim verdict (``Store.save_provenance``) and
shown on the site's claim pages."""

from __future__ import annotations

import json
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

from genlab import __version__


def git_commit(path: Path | None = None) -> tuple[str | None, bool | None]:
    """The commit of the git work tree holding ``path`` (default: genlab's source) and whether it
    has uncommitted changes; ``(None, None)`` outside a work tree or without git."""
    where = str(path or Path(__file__).resolve().parent)
    try:
        head = subprocess.run(
            ["git", "-C", where, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return None, None
        dirty = subprocess.run(
            ["git", "-C", where, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return head.stdout.strip(), bool(dirty.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return None, None


def collect(started: float | None = None) -> dict[str, Any]:
    """Provenance now; with ``started`` (a ``time.time()``), also the wall time since then."""
    import torch

    commit, dirty = git_commit()
    now = time.time()
    return {
        "genlab_version": __version__,
        "git_commit": commit,
        "git_dirty": dirty,
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "platform": platform.platform(),
        "host": socket.gethostname(),
        "started": started,
        "finished": now,
        "wall_s": None if started is None else round(now - started, 3),
        "argv": sys.argv[:],
    }


def verdict_extras(table: pd.DataFrame, started: float) -> dict[str, Any]:
    """What a verdict keeps beside its row: provenance and the claim's evidence table (as
    ``{"columns", "data"}``, JSON-safe: NaN becomes null)."""
    flat = table.reset_index() if not isinstance(table.index, pd.RangeIndex) else table
    names: list[str] = []
    for c in flat.columns:
        name = " / ".join(map(str, c)) if isinstance(c, tuple) else str(c)
        names.append(name if name not in names else f"{name} ({len(names)})")  # keep every column
    flat = flat.set_axis(names, axis=1)
    records = json.loads(flat.to_json(orient="split", index=False, default_handler=str))
    return {
        "provenance": collect(started),
        "table": {"columns": records["columns"], "data": records["data"]},
    }
