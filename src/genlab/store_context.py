"""The store that the run being built belongs to, for components that read other runs from it.

``genlab.engine.run_spec`` builds each run inside ``using_store(store)``; a model initialised from
a parent run (``from_run``), a distillation method reading its teachers, or a task re-weighted by an
earlier run (``useful``) call ``active_store()`` to find them. Outside a run it is the default store
(``$GENLAB_STORE`` or ``./genlab-runs``), as for the command line.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from genlab.store import Store

_ACTIVE: ContextVar[Store | None] = ContextVar("genlab_active_store", default=None)


@contextmanager
def using_store(store: Store) -> Iterator[Store]:
    """Make ``store`` the active store inside the ``with`` block."""
    token = _ACTIVE.set(store)
    try:
        yield store
    finally:
        _ACTIVE.reset(token)


def active_store() -> Store:
    """The store set by ``using_store``, else the default one."""
    return _ACTIVE.get() or Store()
