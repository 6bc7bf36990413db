"""Help for a mistyped or missing name: close matches, and plugin files that would register it.

``unknown_name`` is what ``Registry.get`` says for a name it does not hold: ``unknown method
'ermm' (did you mean 'erm'?); allowed: ...``, and, when a ``.py`` file in the working folder (or a
folder just below it) registers the name, ``./my_penalty.py registers it: forgot --import
./my_penalty.py?``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from pathlib import Path

MAX_FILES = 300  # plugin files looked at, at most (the working folder and the folders below it)
MAX_BYTES = 1_000_000


def close_matches(name: str, names: Sequence[str], n: int = 3) -> list[str]:
    """Up to ``n`` names close to ``name`` (difflib's ratio of at least 0.6)."""
    return difflib.get_close_matches(name, list(names), n=n)


def did_you_mean(name: str, names: Sequence[str]) -> str:
    """``did you mean 'a' or 'b'?``, or empty when nothing is close."""
    close = close_matches(name, names)
    return f"did you mean {' or '.join(map(repr, close))}?" if close else ""


def plugin_files_naming(name: str, folder: Path | None = None) -> list[Path]:
    """``.py`` files in ``folder`` (default the working folder) and its subfolders, one level
    down, that register ``name`` (``.register("name"``)."""
    folder = folder or Path.cwd()
    pattern = re.compile(r"\.register\(\s*['\"]" + re.escape(name) + r"['\"]")
    found = []
    files = [*sorted(folder.glob("*.py")), *sorted(folder.glob("*/*.py"))][:MAX_FILES]
    for f in files:
        try:
            if f.stat().st_size <= MAX_BYTES and pattern.search(f.read_text(errors="replace")):
                found.append(f)
        except OSError:
            continue
    return found


def unknown_name(kind: str, name: str, names: Sequence[str]) -> str:
    """The one-line error for a name a registry does not hold:
    ``unknown KIND 'NAME' (HINTS); allowed: ...``."""
    hints = [did_you_mean(name, names)]
    files = plugin_files_naming(name)
    if files:
        here = Path.cwd()
        rel = (
            f"./{files[0].relative_to(here).as_posix()}"
            if files[0].is_relative_to(here)
            else files[0]
        )
        hints.append(f"{rel} registers it: forgot --import {rel}?")
    hint = "; ".join(h for h in hints if h)
    allowed = ", ".join(names) or "(none registered)"
    return f"unknown {kind} {name!r}{f' ({hint})' if hint else ''}; allowed: {allowed}"
