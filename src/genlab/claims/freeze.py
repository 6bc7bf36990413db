"""Frozen designs (pre-registration): each claim's design at each budget, hashed and written with
a date to ``claims.lock`` before its full run, and every later change recorded with its reason and
whether a result had been seen (DESIGN.md, "Claims can fail, and can pass").

A design is what decides a verdict: the resolved configuration, the run ids of the arms, the guards
and their levels, each applicable control's resolved configuration, the statement, scope and
aggregation, and the code of the claim's judge (its class, without docstrings or formatting, so
editing prose changes nothing). ``genlab claims freeze`` writes the lock; a test fails when a
registered design no longer matches it, so no design changes unrecorded.

The lock is JSON: ``{claim id: {budget: {"hash", "frozen", "changes": [{"date", "from", "to",
"reason", "after_result"}]}}}``.
"""

from __future__ import annotations

import ast
import datetime as dt
import hashlib
import inspect
import json
import textwrap
from pathlib import Path
from typing import Any

from genlab.claims.base import Budget, Claim
from genlab.errors import SpecError

LOCK = Path(__file__).resolve().parents[3] / "claims.lock"  # the repository's root


def _sets(stmt: ast.stmt, name: str) -> bool:
    """Whether ``stmt`` assigns ``name`` (``name = ...`` or ``name: T = ...``)."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    return isinstance(stmt, ast.Assign | ast.AnnAssign) and any(
        isinstance(t, ast.Name) and t.id == name for t in targets
    )


def judge_source(claim: Claim) -> str:
    """The claim class's code without docstrings, ``to_decide`` (what deciding would take, not
    the design) or formatting (``ast.dump``)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(type(claim))))
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        cls.body = [s for s in cls.body if not _sets(s, "to_decide")] or [ast.Pass()]
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


def design(claim: Claim, budget: Budget) -> dict[str, Any]:
    """What the claim's design at ``budget`` is (the module docstring lists it)."""
    cfg = claim.config(budget)
    return {
        "claim": claim.id,
        "budget": budget,
        "statement": claim.statement,
        "scope": claim.scope,
        "config": cfg.model_dump(mode="json"),
        "runs": sorted(s.run_id for s in claim.specs(cfg)),
        "guards": [
            json.dumps(g.describe(), sort_keys=True, default=repr) for g in claim.guards(cfg)
        ],
        "controls": {
            n: {
                "expect": c.expect,
                "budget": c.budget,
                "config": claim.config(c.budget, control=n).model_dump(mode="json"),
            }
            for n, c in claim.applicable_controls(budget).items()
        },
        "aggregate": claim.aggregate,
        "smoke_decides": claim.smoke_decides,
        "seed_rule": repr(claim.rule(budget)),
        "judge": hashlib.sha256(judge_source(claim).encode()).hexdigest(),
    }


def design_hash(claim: Claim, budget: Budget) -> str:
    text = json.dumps(design(claim, budget), sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def read_lock(path: Path = LOCK) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.is_file() else {}


def frozen(claim: Claim, budget: Budget, lock: dict[str, Any] | None = None) -> bool:
    """Whether the claim's design at ``budget`` is the one the lock holds."""
    entry = (read_lock() if lock is None else lock).get(claim.id, {}).get(budget)
    return bool(entry) and entry["hash"] == design_hash(claim, budget)


def changes(claim_id: str, lock: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every recorded change of a claim's design, each with its budget."""
    entry = (read_lock() if lock is None else lock).get(claim_id, {})
    return [{"budget": b, **c} for b, e in entry.items() for c in e.get("changes", [])]


def freeze(
    claims: list[Claim],
    reason: str | None = None,
    after_result: bool | None = None,
    path: Path = LOCK,
    today: str | None = None,
) -> dict[str, list[str]]:
    """Write the designs of ``claims`` to the lock. A design not in it yet is frozen as it is; one
    that differs from its frozen hash is a change, and needs ``reason`` and ``after_result``
    (whether a result of the old design had been seen), recorded beside it. Returns the claim
    ids ``{"frozen": [...], "changed": [...], "unchanged": [...]}``; nothing is written when a
    change lacks its reason."""
    lock, date = read_lock(path), today or dt.date.today().isoformat()
    done: dict[str, list[str]] = {"frozen": [], "changed": [], "unchanged": []}
    pending = []
    for claim in claims:
        for budget in claim.budgets:
            h, entry = design_hash(claim, budget), lock.get(claim.id, {}).get(budget)
            key = f"{claim.id}@{budget}"
            if entry is None:
                lock.setdefault(claim.id, {})[budget] = {"hash": h, "frozen": date, "changes": []}
                done["frozen"].append(key)
            elif entry["hash"] == h:
                done["unchanged"].append(key)
            else:
                pending.append(key)
                entry["changes"].append(
                    {
                        "date": date,
                        "from": entry["hash"],
                        "to": h,
                        "reason": reason,
                        "after_result": after_result,
                    }
                )
                entry["hash"] = h
                done["changed"].append(key)
    if pending and (not reason or after_result is None):
        raise SpecError(
            f"changed designs need --reason and --after-result/--before-result: "
            f"{', '.join(pending)}"
        )
    path.write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n")
    return done


__all__ = [
    "LOCK",
    "changes",
    "design",
    "design_hash",
    "freeze",
    "frozen",
    "judge_source",
    "read_lock",
]
