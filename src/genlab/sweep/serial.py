"""The serial executor: train the specs one after another in this process."""

from __future__ import annotations

from collections.abc import Sequence

from genlab.engine import run_spec
from genlab.errors import GenlabError
from genlab.spec import RunSpec
from genlab.store import RunBusy, Store
from genlab.sweep.base import Outcome, pending


def run_one(spec: RunSpec, store: Store, progress: bool) -> Outcome:
    """Train one spec; a failure is recorded in the store by the engine and returned here, and a
    spec another live process took meanwhile is ``busy``."""
    try:
        result = run_spec(spec, store, progress=progress)
    except RunBusy as exc:
        return Outcome(spec.run_id, "busy", str(exc))
    except GenlabError as exc:
        status = store.status(spec.run_id) or "failed"
        return Outcome(spec.run_id, status if status != "running" else "failed", str(exc))
    return Outcome(result.run_id, "skipped" if result.skipped else result.status)


def serial(specs: Sequence[RunSpec], store: Store, progress: bool = True) -> list[Outcome]:
    """Train ``specs`` one at a time; finished ids are skipped, dead ``running`` ones resumed."""
    todo, outcomes = pending(specs, store)
    for spec in todo:
        outcomes.append(run_one(spec, store, progress))
    return outcomes
