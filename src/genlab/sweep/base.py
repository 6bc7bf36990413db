"""What every executor shares: the outcome of one run, and which specs still need training."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from genlab.spec import RunSpec
from genlab.store import Store


@dataclass
class Outcome:
    """How one spec of a sweep ended: ``done``, ``diverged``, ``failed``, ``skipped`` (already
    done), or ``busy`` (a live process elsewhere is training it)."""

    run_id: str
    status: str
    error: str | None = None


FINISHED = ("done", "diverged")  # final results: a sweep never trains these again
Executor = Callable[[Sequence[RunSpec], Store, bool], list[Outcome]]


def pending(specs: Sequence[RunSpec], store: Store) -> tuple[list[RunSpec], list[Outcome]]:
    """Split specs into those to train and the outcomes of those that need nothing.

    Finished ids (``done``, ``diverged``) are skipped; ids whose process died (``interrupted``)
    count as pending (the engine resumes them from their checkpoint); ids another live process
    holds the lease of are ``busy`` (``genlab.store``).
    """
    todo: list[RunSpec] = []
    done: list[Outcome] = []
    seen: set[str] = set()
    for spec in specs:
        rid = spec.run_id
        if rid in seen:
            continue
        seen.add(rid)
        status = store.status(rid)
        holder = store.holder(rid)
        if status in FINISHED:
            done.append(Outcome(rid, "skipped", None if status == "done" else status))
        elif holder is not None and not holder.is_me:
            done.append(Outcome(rid, "busy", f"run {rid} is being trained by {holder}"))
        else:
            todo.append(spec)
    return todo, done
