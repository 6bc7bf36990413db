"""Every registered claim under the audit's rules (``genlab.claims.audit``): its judge reaches
both decisions at the full budget on its own synthetic tables and reads an unfit arm as
inconclusive; a smoke budget that cannot decide is declared so; it has a negative control that
trains runs of its own and could come out "reproduced"; no positive control is the claim's own
configuration, and each could come out "not reproduced"; its scope is declared."""

from __future__ import annotations

import pytest

from genlab.claims import CLAIMS
from genlab.claims.audit import audit_claim

IDS = sorted(e.name for e in CLAIMS.entries())


@pytest.mark.parametrize("claim_id", IDS)
def test_claim_passes_the_audit(claim_id):
    report = audit_claim(CLAIMS.get(claim_id).obj)
    assert not report["problems"], "; ".join(report["problems"])
    assert {"reproduced", "not reproduced"} <= set(report["reachable"]["full"])


@pytest.mark.parametrize("claim_id", IDS)
def test_scope_is_declared_and_says_what_it_scales(claim_id):
    claim = CLAIMS.get(claim_id).obj
    assert claim.scope in ("paper", "proxy", "reconstruction")
    assert claim.scope == "paper" or len(claim.scope_note) > 20
    assert "TODO" not in claim.scope_note
