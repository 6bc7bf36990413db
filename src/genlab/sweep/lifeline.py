"""Worker processes that die with the process that started them.

A sweep killed with ``kill -9`` cannot stop its workers, and they went on training (issue 19). So
a worker asks the kernel to send it SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG)``,
Linux, through ctypes); elsewhere, or if that call fails, a daemon thread polls the parent pid
once a second and exits when it changes. A killed worker leaves what any SIGKILL leaves: its run
reads ``interrupted`` and resumes from its last checkpoint when the sweep is run again.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1
POLL_S = 1.0
_armed: dict[int, str] = {}  # pid -> how, so that a reused worker (Ray's) arms once


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL_S)
    os._exit(1)


def die_with_parent(parent: int | None = None, use_prctl: bool = True) -> str:
    """Make this process exit when ``parent`` (default: its parent now) dies; returns how
    (``prctl`` or ``poll``)."""
    if os.getpid() in _armed:
        return _armed[os.getpid()]
    parent = parent or os.getppid()
    how = "poll"
    if use_prctl and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0:
                how = "prctl"
        except (OSError, AttributeError):
            pass
    if how == "poll":
        threading.Thread(target=_watch, args=(parent,), daemon=True, name="lifeline").start()
    elif os.getppid() != parent:  # it died before the call took effect
        os._exit(1)
    _armed[os.getpid()] = how
    return how
