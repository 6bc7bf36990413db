"""Hold a run's lease while training it: one process per run id, others wait or are told who.

``hold(store, run_id, wait)`` takes the lease (see ``genlab.store``): if another live process holds
it, it raises ``RunBusy`` ("run X is being trained by pid N on HOST") or, with ``wait``, polls until
the holder finishes or dies. While held, a daemon thread renews the heartbeat every
``HEARTBEAT_S`` seconds (so other hosts sharing the store see the holder is alive); the lease is
released when the block ends. Executors that train several runs at once (the vmap executor) can
wrap each run id in ``hold`` the same way.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from genlab.errors import GenlabError
from genlab.store import LEASE_TIMEOUT, RunBusy, Store

HEARTBEAT_S = LEASE_TIMEOUT / 12
POLL_S = 0.5


def _heartbeat(root: str, run_id: str, stop: threading.Event) -> None:
    store = Store(root)  # a connection of this thread's own
    try:
        while not stop.wait(HEARTBEAT_S):
            try:
                store.heartbeat(run_id)
            except GenlabError:  # a full disk or a busy store: try again next beat
                pass
    finally:
        store.close()


@contextmanager
def hold(store: Store, run_id: str, wait: bool = False) -> Iterator[None]:
    """Hold ``run_id``'s lease for the block (see the module docstring)."""
    holder = store.acquire(run_id)
    if holder is not None and not wait:
        raise RunBusy(run_id, holder)
    if holder is not None:
        print(
            f"run {run_id} is being trained by {holder}; waiting for it to finish",
            file=sys.stderr,
            flush=True,
        )
    while holder is not None:
        time.sleep(POLL_S)
        holder = store.acquire(run_id)
    stop = threading.Event()
    beat = threading.Thread(target=_heartbeat, args=(str(store.root), run_id, stop), daemon=True)
    beat.start()
    try:
        yield
    finally:
        stop.set()
        beat.join()
        try:
            store.release(run_id)
        except GenlabError:  # the lease then dies with this process
            pass
