"""The pool executor: N worker processes, each with its own store connection and torch threads.

Workers are forked (on Linux; spawned elsewhere), so they start at once with torch, genlab and
the registries the parent already loaded. Each sets its torch threads to its share of the cores
(a cap: ``genlab.engine.threads`` may choose fewer), opens the store itself and trains
whole specs with ``genlab.engine.run_spec``; SQLite's write lock serialises their short
transactions, so no result is lost. The parent only hands out specs and collects outcomes. A
worker dies with the parent (``genlab.sweep.lifeline``), so a killed sweep leaves no workers.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

from genlab.errors import GenlabError, SpecError
from genlab.spec import RunSpec
from genlab.store import Store
from genlab.sweep.base import Outcome, pending

_STORE: Store | None = None


def threads_per_worker(workers: int, total: int | None = None) -> int:
    """Divide the machine's cores (or ``total``) among ``workers``, at least one each."""
    total = total or os.cpu_count() or 1
    return max(1, total // workers)


def _init(root: str, threads: int, parent: int) -> None:
    global _STORE
    import torch

    from genlab.sweep.lifeline import die_with_parent

    die_with_parent(parent)
    torch.set_num_threads(threads)  # the engine's thread choice stays within it
    _STORE = Store(root)


def _work(spec_json: str) -> tuple[str, str, str | None]:
    from genlab.spec import parse_spec
    from genlab.sweep.serial import run_one

    assert _STORE is not None
    spec = parse_spec(json.loads(spec_json))
    o = run_one(spec, _STORE, progress=False)
    return o.run_id, o.status, o.error


def _context() -> mp.context.BaseContext:
    return mp.get_context("fork" if sys.platform == "linux" else "spawn")


def pool(workers: int, threads: int | None = None):
    """An executor over ``workers`` processes with ``threads`` torch threads each (default: the
    cores divided among them)."""
    if workers < 1:
        raise SpecError(f"workers must be >= 1, got {workers}")
    per = threads or threads_per_worker(workers)

    def execute(specs: Sequence[RunSpec], store: Store, progress: bool = True) -> list[Outcome]:
        todo, outcomes = pending(specs, store)
        if not todo:
            return outcomes
        n = min(workers, len(todo))
        with ProcessPoolExecutor(
            n,
            mp_context=_context(),
            initializer=_init,
            initargs=(str(store.root), per, os.getpid()),
        ) as ex:
            futures = [ex.submit(_work, s.canonical_json()) for s in todo]
            for i, fut in enumerate(as_completed(futures), 1):
                try:
                    rid, status, error = fut.result()
                except BrokenProcessPool:
                    raise GenlabError(
                        "a pool worker died (killed, or out of memory); run the sweep again to "
                        "resume it: finished runs are kept, the others resume from checkpoints"
                    ) from None
                outcomes.append(Outcome(rid, status, error))
                if progress:
                    print(f"[{i}/{len(todo)}] {rid} {status}", file=sys.stderr, flush=True)
        return outcomes

    execute.__name__ = f"pool({workers})"
    return execute
