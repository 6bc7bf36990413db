"""Run a claim: train its specs (skipping finished ones), judge, draw the evidence, record the verdict."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from genlab.claims.base import Budget, Claim, ClaimResult
from genlab.engine import run_spec
from genlab.errors import GenlabError, SpecError
from genlab.provenance import verdict_extras
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


def run_claim(
    claim: Claim,
    store: Store,
    budget: Budget = "smoke",
    overrides: dict[str, Any] | None = None,
    progress: bool = True,
    execute: Executor | str = serial,
    control: str | None = None,
) -> ClaimResult:
    """Train the claim's runs with ``execute`` (a function, or an executor name of
    ``genlab.sweep.make_executor``: ``serial``, ``pool``, ``vmap``, ``ray``), judge them, draw the
    evidence figure and record the verdict with its provenance. With ``control`` (a name of
    ``claim.controls``), run that control instead; its verdict is returned, not recorded."""
    if isinstance(execute, str):
        from genlab.sweep import make_executor

        execute = make_executor(execute)
    started = time.time()
    cfg = claim.config(budget, overrides, control)
    specs = claim.specs(cfg)
    for stage in stages(specs):
        execute(stage, store, progress)
    ids = [s.run_id for s in specs]
    runs = store.runs(where=f"run_id IN ({','.join('?' * len(ids))})", args=tuple(ids))
    metrics = store.metrics(ids)
    result = claim.judge(cfg, runs, metrics)
    if control is None:
        result = claim.recorded(result, budget)
    config_id = claim.config_id(cfg)
    name = f"{claim.id}-{budget}-{control}" if control else f"{claim.id}-{budget}"
    result.figure = claim.draw(
        cfg, result, metrics, store.root / "claims" / f"{name}-{config_id}.png"
    )
    result.config, result.run_ids = cfg.model_dump(mode="json"), ids
    if control is None:
        store.save_verdict({
            "claim_id": claim.id, "config_id": config_id, "budget": budget, "config": result.config,
            "verdict": result.verdict, "statistic": result.statistic, "evidence": result.evidence,
            "figure": str(result.figure) if result.figure else None, "run_ids": ids,
        })  # fmt: skip
        extras = verdict_extras(result.table, started)
        extras["guards"] = [g.__dict__ for g in result.guards]
        store.save_verdict_extras(claim.id, config_id, extras)
    return result
