"""Run a claim: train its specs (skipping finished ones), judge, draw the evidence, record the verdict."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any

from genlab.claims.base import Budget, Claim, ClaimResult, Verdict
from genlab.claims.freeze import design_hash, frozen
from genlab.claims.guards import CONFIDENCE
from genlab.engine import run_spec
from genlab.errors import GenlabError, SpecError
from genlab.provenance import verdict_extras
from genlab.registry import Params
from genlab.spec import RunSpec
from genlab.store import Store

Executor = Callable[[Sequence[RunSpec], Store, bool], None]


def serial(specs: Sequence[RunSpec], store: Store, progress: bool) -> None:
    """Train specs one after another; a failed run is recorded as failed and the others go on."""
    for spec in specs:
        try:
            run_spec(spec, store, progress=progress)
        except SpecError:
            raise
        except GenlabError:
            continue


def stages(specs: Sequence[RunSpec]) -> list[list[RunSpec]]:
    """The specs in the order their dependencies allow: a spec that names another one's run id (a
    ``from_run`` parent, a USEFUL early run, a teacher, a soup's ingredients) comes in a later
    stage, so that any executor may train one stage at once."""
    ids = {s.run_id for s in specs}
    needs = {s.run_id: {r for r in ids if r != s.run_id and r in s.canonical_json()} for s in specs}
    out, done, left = [], set(), list(specs)
    while left:
        stage = [s for s in left if needs[s.run_id] <= done]
        if not stage:
            raise SpecError("the claim's runs depend on each other in a cycle")
        out.append(stage)
        done |= {s.run_id for s in stage}
        left = [s for s in left if s.run_id not in done]
    return out


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (pool workers are joined per stage)."""
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def measured_controls(claim: Claim, store: Store, budget: Budget) -> dict[str, Verdict | None]:
    """What each control that licenses a verdict at ``budget`` measured at its current design (the
    newest verdict the store holds for its configuration), ``None`` where it has not run."""
    found = store.control_verdicts(claim.id)
    out: dict[str, Verdict | None] = {}
    for name, c in claim.applicable_controls(budget).items():
        config_id = claim.config_id(claim.config(c.budget, control=name))
        rows = found[(found["control"] == name) & (found["config_id"] == config_id)]
        out[name] = rows["verdict"].iloc[-1] if len(rows) else None
    return out


def straddles(result: ClaimResult, fixed: Collection[str] = ()) -> bool:
    """Whether more seeds could decide: the verdict is inconclusive, an interval straddles its
    threshold and no guard but the intervals' own (power) failed. An arm that did not fit, or
    parts that disagree, stop a seed rule (more seeds of the same design do not fix them), and so
    does an interval named in ``fixed``, whose units more seeds do not add to (``fixed_units``)."""
    failed = {g.kind for g in result.guards if not g.ok}
    return (
        result.verdict == "inconclusive"
        and failed <= {"power"}
        and any(iv.verdict() == "inconclusive" and iv.name not in fixed for iv in result.intervals)
    )


def fixed_units(claim: Claim, now: Params, later: Params) -> set[str]:
    """The intervals whose units more seeds do not add to: each judged on the claim's synthetic
    ``effect`` table at ``now``'s seeds and at ``later``'s, those whose ``n`` stays the same (the
    models of a zoo, ranked task x length cells); an interval over seeds, or over seed x task
    pairs, grows. Part of genlab's seed rule (issue #36, Dec 4 2026, declared for every claim at
    once after length.nope's second look, which could not narrow its intervals over cells)."""
    try:
        before, after = (
            claim.evaluate(c, claim.synthetic_table(c, "effect")).intervals for c in (now, later)
        )
    except NotImplementedError:  # no synthetic tables: every interval counts
        return set()
    n = {iv.name: iv.n for iv in before}
    return {iv.name for iv in after if n.get(iv.name) == iv.n}


def more_seeds(claim: Claim, result: ClaimResult, now: Params, later: Params | None) -> bool:
    """Whether a seed rule takes its next look, the design ``later`` (``None``: there is none),
    after judging ``now``: an interval straddles whose units the extra seeds add to."""
    return (
        later is not None
        and straddles(result)
        and straddles(result, fixed_units(claim, now, later))
    )


def run_claim(
    claim: Claim,
    store: Store,
    budget: Budget = "smoke",
    overrides: dict[str, Any] | None = None,
    progress: bool = True,
    execute: Executor | str = serial,
    control: str | None = None,
    controls: bool = True,
) -> ClaimResult:
    """Train the claim's runs with ``execute`` (a function, or an executor name of
    ``genlab.sweep.make_executor``: ``serial``, ``pool``, ``vmap``, ``ray``), judge them, draw the
    evidence figure and record the verdict with its provenance, licensed by what the controls
    measured (``Claim.recorded``). With ``controls`` (the default), every control that licenses a
    verdict at ``budget`` is run first (finished runs and measured controls are reused); without,
    the verdict names the controls not yet measured. With ``control`` (a name of
    ``claim.controls``), run that control instead, at its own budget: its verdict is recorded as
    the control's, not the claim's. A claim (or control) with a seed rule at ``budget``
    (``Claim.rule``) is judged at each of the rule's looks in turn (its intervals at that look's
    level) while an interval straddles that the next look's seeds add to (``more_seeds``); the
    seeds of the last look are what the recorded configuration says."""
    if isinstance(execute, str):
        from genlab.sweep import make_executor

        execute = make_executor(execute)
    started, cpu = time.time(), cpu_seconds()
    if control is None and controls:
        for name, c in claim.applicable_controls(budget).items():
            run_claim(claim, store, c.budget, progress=progress, execute=execute, control=name)
    if control is not None:
        budget = claim.controls[control].budget if control in claim.controls else budget
    rule = claim.rule(budget, control)
    looks = rule.looks() if rule and "seeds" not in (overrides or {}) else [None]
    for i, n in enumerate(looks):  # a sequential rule's looks, or the one design
        more = {"seeds": n} if n is not None else {}
        cfg = claim.config(budget, {**(overrides or {}), **more}, control)
        specs = claim.specs(cfg)
        for stage in stages(specs):
            execute(stage, store, progress)
        ids = [s.run_id for s in specs]
        runs = store.runs(where=f"run_id IN ({','.join('?' * len(ids))})", args=tuple(ids))
        metrics = store.metrics(ids)
        token = CONFIDENCE.set(rule.confidence(n)) if n is not None else None
        try:
            result = claim.judge(cfg, runs, metrics)
        finally:
            if token is not None:
                CONFIDENCE.reset(token)
        later = looks[i + 1] if i + 1 < len(looks) else None
        nxt = {**(overrides or {}), "seeds": later}
        if not more_seeds(
            claim, result, cfg, claim.config(budget, nxt, control) if later else None
        ):
            break
    # a control's verdict is found by its declared design (``measured_controls``), whatever look
    config_id = claim.config_id(
        cfg if control is None else claim.config(budget, overrides, control)
    )
    if control is None:
        result = claim.recorded(result, budget, measured_controls(claim, store, budget))
    name = f"{claim.id}-{budget}-{control}" if control else f"{claim.id}-{budget}"
    result.figure = claim.draw(
        cfg, result, metrics, store.root / "claims" / f"{name}-{config_id}.png"
    )
    result.config, result.run_ids = cfg.model_dump(mode="json"), ids
    if control is not None:
        if not overrides:  # a control measures its declared design, nothing else
            store.save_control_verdict(
                {
                    "claim_id": claim.id,
                    "control": control,
                    "config_id": config_id,
                    "budget": budget,
                    "verdict": result.verdict,
                    "statistic": result.statistic,
                    "evidence": result.evidence,
                    "run_ids": ids,
                }
            )
        return result
    store.save_verdict(
        {
            "claim_id": claim.id,
            "config_id": config_id,
            "budget": budget,
            "config": result.config,
            "verdict": result.verdict,
            "statistic": result.statistic,
            "evidence": result.evidence,
            "figure": str(result.figure) if result.figure else None,
            "run_ids": ids,
        }
    )
    extras = verdict_extras(result.table, started)
    extras["guards"] = [g.__dict__ for g in result.guards]
    extras.update(wall_s=time.time() - started, cpu_s=cpu_seconds() - cpu)  # controls included
    extras["intervals"] = [{**iv.__dict__, "verdict": iv.verdict()} for iv in result.intervals]
    if n is not None:
        extras["seed_rule"] = {"looks": looks, "stopped_at": n, "confidence": rule.confidence(n)}
    extras.update(
        scope=claim.scope,
        decision=result.decision,
        controls=result.controls,
        design_hash=design_hash(claim, budget) if not overrides else None,
        frozen=not overrides and frozen(claim, budget),
    )
    store.save_verdict_extras(claim.id, config_id, extras)
    return result
