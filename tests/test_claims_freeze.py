"""Frozen designs (``genlab.claims.freeze``): the committed ``claims.lock`` holds every registered
claim's design at each budget, so a design changed without a recorded entry fails here; freezing
records a change only with its reason and whether a result had been seen."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from genlab.claims import CLAIMS
from genlab.claims.freeze import LOCK, design_hash, freeze, frozen, read_lock
from genlab.errors import SpecError

IDS = sorted(e.name for e in CLAIMS.entries())


@pytest.mark.parametrize("claim_id", IDS)
def test_every_design_is_the_frozen_one(claim_id):
    claim, lock = CLAIMS.get(claim_id).obj, read_lock()
    for budget in claim.budgets:
        entry = lock.get(claim_id, {}).get(budget)
        assert entry, f"{claim_id}@{budget} is not frozen: genlab claims freeze {claim_id}"
        assert entry["hash"] == design_hash(claim, budget), (
            f"{claim_id}@{budget}: the design changed since it was frozen; record the change: "
            f"genlab claims freeze {claim_id} --reason '...' --after-result|--before-result"
        )


def test_a_change_is_recorded_with_its_reason(tmp_path, monkeypatch):
    path = tmp_path / "claims.lock"
    claim = CLAIMS.get("grokking.linear").obj
    done = freeze([claim], path=path, today="2026-12-03")
    assert sorted(done["frozen"]) == ["grokking.linear@full", "grokking.linear@smoke"]
    lock = read_lock(path)
    assert frozen(claim, "full", lock) and lock[claim.id]["full"]["frozen"] == "2026-12-03"
    negative = replace(claim.controls["negative"], overrides={"noise": 0.3})
    monkeypatch.setitem(type(claim).controls, "negative", negative)
    assert not frozen(claim, "smoke", lock)
    with pytest.raises(SpecError, match="need --reason"):
        freeze([claim], path=path)
    assert read_lock(path) == lock  # nothing written
    freeze([claim], reason="noise 0.2 -> 0.3", after_result=True, path=path, today="2026-12-04")
    (change,) = json.loads(path.read_text())[claim.id]["smoke"]["changes"]
    assert change["reason"] == "noise 0.2 -> 0.3" and change["after_result"] is True
    assert frozen(claim, "smoke", read_lock(path))


def test_the_lock_lives_at_the_repository_root():
    assert LOCK.name == "claims.lock" and (LOCK.parent / "pyproject.toml").is_file()


def _with_to_decide(base):
    class Same(base):
        to_decide = "50,000 steps, ~3 CPU-hours"

        def decide(self, cfg, table):
            return super().decide(cfg, table)

    return Same()


def _without(base):
    class Same(base):
        def decide(self, cfg, table):
            return super().decide(cfg, table)

    return Same()


def _other_code(base):
    class Same(base):
        to_decide = "50,000 steps, ~3 CPU-hours"

        def decide(self, cfg, table):
            return super().decide(cfg, table.head(1))

    return Same()


def test_what_deciding_would_take_is_not_the_design():
    """``to_decide`` is left out of the judge's code, as docstrings are; code is not."""
    from genlab.claims.freeze import judge_source

    base = type(CLAIMS.get("grokking.linear").obj)
    said = _with_to_decide(base)
    assert said.to_decide and judge_source(said) == judge_source(_without(base))
    assert judge_source(said) != judge_source(_other_code(base))
