"""The family pages' verdict tables are generated from ``docs/verdicts.md`` by
``tools/verdict_tables.py``: a row edited in one place and not the other fails here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from genlab.claims import CLAIMS

ROOT = Path(__file__).resolve().parent.parent


def test_family_pages_match_docs_verdicts():
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "verdict_tables.py"), "--check"],
                         capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr


def test_every_claim_has_a_row():
    text = (ROOT / "docs" / "verdicts.md").read_text()
    missing = [e.name for e in CLAIMS.entries() if f"| `{e.name}` |" not in text]
    assert not missing, f"claims without a row in docs/verdicts.md: {missing}"
