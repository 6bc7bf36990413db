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

    Finished ids (``done``, ``diverged``) are skipped; ids left ``running`` by a dead process count as pending (the engine
    resumes them from their checkpoint); ids a live process is training are ``busy``.
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
        if status in FINISHED:
            done.append(Outcome(rid, "skipped", None if status == "done" else status))
        elif store.is_live(rid):
            done.append(Outcome(rid, "busy", "being trained by another live process"))
        else:
            todo.append(spec)
    return todo, done
