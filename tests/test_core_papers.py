"""Every citation points at a real catalogue row; every component a claim uses exists."""

from __future__ import annotations

from genlab.claims import CLAIMS
from genlab.coverage import catalogue, registries


def test_catalogue_has_the_120_seed_papers():
    papers = catalogue()
    assert sorted(papers) == list(range(1, 121))
    assert papers[55].family == "grokking" and papers[55].tier == "T1"


def test_every_citation_is_a_real_paper():
    numbers = set(catalogue())
    for kind, reg in registries().items():
        for entry in reg.entries():
            bad = set(entry.papers) - numbers
            assert not bad, f"{kind} {entry.name} cites unknown papers {bad}"


def test_every_claim_states_itself_and_its_specs_use_registered_components():
    for entry in CLAIMS.entries():
        claim = entry.obj
        assert claim.statement and claim.family, claim.id
        for budget in claim.budgets:
            claim.specs(claim.config(budget))  # validates every component name and params
