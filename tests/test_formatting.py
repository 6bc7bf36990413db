"""One formatter, no exceptions: every Python file is as ``ruff format`` writes it, and none opts
out with ``fmt: skip`` / ``fmt: off`` (``make test`` runs ``ruff format --check`` beside this)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPT_OUT = re.compile(r"#\s*fmt:\s*(skip|off)\b")


def opt_outs(text: str) -> list[int]:
    """Line numbers (1-based) of the formatter opt-out comments in ``text``."""
    return [i for i, line in enumerate(text.splitlines(), 1) if OPT_OUT.search(line)]


def test_the_check_can_fail():
    assert opt_outs("x = 1\ny = [1,  2]  # fmt: skip\n# fmt: off\n") == [2, 3]


def test_no_file_opts_out_of_the_formatter():
    found = {
        str(p.relative_to(ROOT)): lines
        for d in ("src", "tests", "benchmarks", "tools")
        for p in (ROOT / d).rglob("*.py")
        if p != Path(__file__).resolve() and (lines := opt_outs(p.read_text()))
    }
    assert not found, f"formatter opt-outs (remove them and run `make format`): {found}"
