"""The claim audit: which verdicts each claim's judge can reach, and whether its controls can fail.

``genlab claims audit`` feeds every claim's judge its own synthetic tables (``Claim.synthetic``) at
each budget's seed count: one with the stated effect, one without, one with an arm that did not
fit. A claim must reach both ``reproduced`` and ``not reproduced`` at its full budget; its smoke
budget either can too, or is declared a smoke test (``smoke_decides = False``). Each control is
checked as a measurement (DESIGN.md, "Claims can fail, and can pass"):

- ``own_runs``: it trains (at least one optimiser step) at least one run the claim does not: it
  is not the claim's runs judged again, nor their evaluation under another name;
- ``same_as_claim``: its configuration is the claim's own (a positive control must differ);
- ``sensitive``: on synthetic tables its design comes out the other way had the world been the
  other way — a negative control ``reproduced`` with the effect present, a positive control ``not
  reproduced`` without it — so that a guard or a re-judged ceiling does not decide it in advance.

``licensable`` lists the decisions a control could license (a claim with no positive control
cannot record "not reproduced", one whose negative control is known not to fail cannot record
"reproduced"). Nothing here trains; the measured verdicts come from a store when one is given.
"""

from __future__ import annotations

from typing import Any

from genlab.claims.base import BUDGETS, CASES, Budget, Case, Claim, Verdict
from genlab.claims.freeze import design_hash, frozen
from genlab.claims.guards import CONFIDENCE
from genlab.claims.runner import measured_controls, more_seeds
from genlab.store import Store

DECISIONS: tuple[Verdict, ...] = ("reproduced", "not reproduced")


def case_verdicts(claim: Claim, budget: Budget, control: str | None = None) -> dict[Case, str]:
    """The judge's verdict on each synthetic case at ``budget`` (or at ``control``'s design),
    read as the runner reads it: at each look of the seed rule, its intervals at that look's
    level, while one straddles that more seeds add to (``runner.more_seeds``); ``"error: ..."``
    where the claim cannot build the table."""
    rule = claim.rule(budget, control)
    out: dict[Case, str] = {}
    looks = rule.looks() if rule else [None]
    for case in CASES:
        for i, n in enumerate(looks):
            cfg = claim.config(budget, {"seeds": n} if n else None, control)
            token = CONFIDENCE.set(rule.confidence(n)) if rule else None
            try:
                result = claim.evaluate(cfg, claim.synthetic_table(cfg, case))
            except NotImplementedError as exc:
                out[case] = f"error: {exc}"
                break
            finally:
                if token is not None:
                    CONFIDENCE.reset(token)
            out[case] = result.verdict
            later = looks[i + 1] if i + 1 < len(looks) else None
            nxt = claim.config(budget, {"seeds": later}, control) if later else None
            if not more_seeds(claim, result, cfg, nxt):
                break
    return out


def check_control(claim: Claim, name: str) -> dict[str, Any]:
    """``own_runs``, ``same_as_claim`` and ``sensitive`` for one control (module docstring)."""
    c = claim.controls[name]
    own_cfg, ctl_cfg = claim.config(c.budget), claim.config(c.budget, control=name)
    own = {s.run_id for s in claim.specs(own_cfg)}
    runs = {s.run_id for s in claim.specs(ctl_cfg) if s.steps > 0}  # an evaluation trains nothing
    other: Case = "effect" if c.kind == "negative" else "null"
    opposite = "reproduced" if c.kind == "negative" else "not reproduced"
    got = case_verdicts(claim, c.budget, name)[other]
    return {
        "kind": c.kind,
        "expect": c.expect,
        "budget": c.budget,
        "own_runs": bool(runs - own),
        "same_as_claim": claim.config_id(own_cfg) == claim.config_id(ctl_cfg),
        "sensitive": got == opposite,
        "synthetic": {other: got},
    }


def licensable(claim: Claim, budget: Budget) -> list[Verdict]:
    """The decisions a control could license at ``budget``: ``reproduced`` needs a negative
    control there, ``not reproduced`` a positive one, none of them known (``open``) to come out
    otherwise. A decision missing here cannot be recorded, whatever the judge says: no control
    that can fail licenses it."""
    kinds = {"reproduced": "negative", "not reproduced": "positive"}
    ctl = claim.applicable_controls(budget).values()
    return [
        d
        for d, k in kinds.items()
        if any(c.kind == k for c in ctl) and not any(c.kind == k and c.open for c in ctl)
    ]


def audit_claim(claim: Claim, store: Store | None = None) -> dict[str, Any]:
    """One claim's audit (the ``genlab claims audit --json`` object), with the rule each part
    breaks in ``problems`` (empty: the claim is sound by these rules)."""
    budgets = [b for b in BUDGETS if b in claim.budgets]
    cases = {b: case_verdicts(claim, b) for b in budgets}
    reachable = {
        b: sorted({v for v in cases[b].values() if not v.startswith("error")}) for b in budgets
    }
    controls = {n: check_control(claim, n) for n in claim.controls}
    for n, c in controls.items():
        c["measured"] = {
            b: (measured_controls(claim, store, b).get(n) if store else None)
            for b in budgets
            if n in claim.applicable_controls(b)
        }
    problems = [f"{b}: {v}" for b in budgets for v in cases[b].values() if v.startswith("error")]
    full = budgets[-1]
    if missing := [d for d in DECISIONS if d not in reachable[full]]:
        problems.append(f"{full}: cannot reach {' or '.join(map(repr, missing))}")
    if cases[full]["unfit"] != "inconclusive":
        problems.append(f"{full}: an unfit arm gives {cases[full]['unfit']!r}, not inconclusive")
    if "smoke" in budgets and claim.smoke_decides and not set(DECISIONS) <= set(reachable["smoke"]):
        problems.append("smoke cannot reach both decisions: declare smoke_decides = False")
    negatives = [n for n, c in controls.items() if c["kind"] == "negative"]
    if not negatives:
        problems.append("no negative control")
    for n, c in controls.items():
        if c["kind"] == "negative" and not c["own_runs"]:
            problems.append(f"negative control {n} trains no run of its own")
        if c["same_as_claim"]:
            problems.append(f"{c['kind']} control {n} is the claim's own configuration")
        if not c["sensitive"]:
            problems.append(
                f"{c['kind']} control {n} cannot come out the other way "
                f"(synthetic: {c['synthetic']})"
            )
    return {
        "id": claim.id,
        "scope": claim.scope,
        "scope_note": claim.scope_note,
        "licensable": {b: licensable(claim, b) for b in budgets},
        "design_hash": {b: design_hash(claim, b) for b in budgets},
        "frozen": {b: frozen(claim, b) for b in budgets},
        "reachable": reachable,
        "cases": cases,
        "smoke_decides": claim.smoke_decides,
        "controls": controls,
        "problems": problems,
    }


__all__ = ["audit_claim", "case_verdicts", "check_control", "licensable"]
