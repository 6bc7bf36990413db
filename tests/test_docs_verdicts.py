"""The verdict tables of ``docs/verdicts.md`` and the family pages are generated from
``docs/verdicts.json`` by ``tools/verdict_tables.py``: a row edited by hand, or a claim whose
scope changed without regenerating, fails here; every claim has an entry, and every inconclusive
verdict measured under the current rules says why and what would decide it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from genlab.claims import CLAIMS

ROOT = Path(__file__).resolve().parent.parent


def test_tables_are_generated_from_the_json():
    res = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "verdict_tables.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_every_claim_has_an_entry_and_a_row():
    data = json.loads((ROOT / "docs" / "verdicts.json").read_text())
    text = (ROOT / "docs" / "verdicts.md").read_text()
    for e in CLAIMS.entries():
        assert e.name in data and f"| `{e.name}` |" in text, e.name
        assert data[e.name]["scope"] == e.obj.scope
        for budget in ("smoke", "full"):
            rec = data[e.name][budget]
            if rec.get("rules") == "measured" and rec["verdict"] == "inconclusive":
                assert rec["reason"] and rec["needs"], (e.name, budget)


def test_needs_counts_an_interval_in_its_own_units():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from verdict_tables import seeds_needed
    finally:
        sys.path.remove(str(ROOT / "tools"))
    iv = {"name": "d", "estimate": 0.05, "lo": -0.05, "hi": 0.15, "null": 0.0, "smallest": 0.1}
    iv["absence"] = False
    assert seeds_needed({**iv, "n": 4}, 4) == "d: about 16 seeds (now 4)"  # half 0.1, gap 0.05
    assert seeds_needed({**iv, "n": 4}, 4, 3600.0) == "d: about 16 seeds (now 4, ~4.0 CPU-hours)"
    over_cells = seeds_needed({**iv, "n": 6}, 4)  # e.g. task x length cells, not seeds
    assert over_cells == "d: about 24 of its units (now 6; its units are not seeds)"
    on_the_bar = seeds_needed({**iv, "n": 4, "estimate": 0.1001}, 4)
    assert on_the_bar.endswith("sits on a threshold; no number of seeds decides")
    assert seeds_needed({**iv, "n": 6, "estimate": 0.1001}, 4).endswith(
        "no number of its units decides"
    )


def test_needs_says_what_the_claim_measured_deciding_would_take():
    """An arm that did not fit: the claim's own measured ``to_decide`` replaces the generic
    sentence; a straddle still counts seeds."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from verdict_tables import needs_of
    finally:
        sys.path.remove(str(ROOT / "tools"))
    said = CLAIMS.get("comp.icl_forcing").obj.to_decide
    assert "CPU-hours" in said
    assert (
        needs_of("comp.icl_forcing", "full", "fit: arm a did not fit (val 0.1 < 0.8)", []) == said
    )
    generic = needs_of("comp.icl_forcing", "smoke", "fit: arm a did not fit (val 0.1 < 0.8)", [])
    assert generic.startswith("arms that fit")
    iv = {"name": "d", "estimate": 0.05, "lo": -0.05, "hi": 0.15, "null": 0.0, "smallest": 0.1}
    iv.update(absence=False, n=4, verdict="inconclusive")
    assert needs_of("comp.icl_forcing", "full", "straddle", [iv], 4) == "d: about 16 seeds (now 4)"
