"""Prerequisite runs: how a component built from finished runs trains (or finds) the runs it reads.

``train_run`` trains a spec into a store, or returns at once when the store has it done (the
engine's ``run_spec``, waiting for another process training the same id); ``tiny_parent`` trains
the two-step tiny run of a task and a model (their params declared with ``tiny={...}`` at
registration) into the active store (``genlab.store_context``): the parent run of a derived
component's tiny configuration, which the conformance kit builds. Imported lazily: the registries
load this package while the spec and the engine may still be importing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from genlab.store import Store

TINY_BATCH = 32


def train_run(spec: dict[str, Any], store: Store | None = None) -> str:
    """Train ``spec`` (a spec dict) into ``store`` (default: the active store), or find it done
    there; its run id."""
    from genlab.engine import run_spec
    from genlab.spec import parse_spec
    from genlab.store_context import active_store

    st = active_store() if store is None else store
    return run_spec(parse_spec(spec), st, progress=False, wait=True).run_id


def tiny_parent(task: str, model: str, steps: int = 2) -> str:
    """Train ``steps`` updates of the tiny ``task`` and ``model`` into the active store; the run id."""
    from genlab.engine import run_spec
    from genlab.models import MODELS
    from genlab.spec import parse_spec
    from genlab.store_context import active_store
    from genlab.tasks import TASKS

    d = {
        kind: {"name": name, "params": dict(reg.get(name).extra.get("tiny") or {})}
        for kind, name, reg in (("task", task, TASKS), ("model", model, MODELS))
    }
    spec = parse_spec({**d, "steps": steps, "batch_size": TINY_BATCH, "eval": {"log_points": 0}})
    return run_spec(spec, active_store(), progress=False).run_id
