"""How many torch threads a run uses: one for small models, never more than the free cores.

Each process that takes every core for its intra-op threads makes concurrent runs fight: with
OpenMP's default (active, spinning) waiting, two 2-thread processes on 2 cores were 40x slower
than one (issue 19), not 2x. So genlab decides the count per run (``choose``):

1. ``genlab run --threads N`` (the ``threads`` argument of ``run_spec``) or ``GENLAB_THREADS``:
   exactly that many.
2. Otherwise one thread per ``PARAMS_PER_THREAD`` parameters of the model (so small models get 1),
   at most the free cores (the cores this process may use, less those other processes keep busy)
   and at most torch's thread count before the run (``OMP_NUM_THREADS``, a caller's
   ``torch.set_num_threads``, a pool worker's share of the cores).

``genlab/__init__.py`` sets ``OMP_WAIT_POLICY=PASSIVE`` (unless set) before torch is imported, so
idle OpenMP threads sleep instead of spinning; a program that imported torch before genlab keeps
its own policy. The count is recorded in the run's summary (``threads``), not in its id: it does
not change what is trained, though a model above the threshold may round differently with another
count (see the README's Speed section).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from genlab.errors import SpecError

PARAMS_PER_THREAD = 1_000_000
ENV = "GENLAB_THREADS"


def cores() -> int:
    """Cores this process may use: its CPU affinity, bounded by a cgroup CPU quota if any."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            n = min(n, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return n


def busy_elsewhere() -> int:
    """Cores other processes keep busy: the larger of the processes runnable now and the
    1-minute load average, each less this process."""
    try:
        fields = Path("/proc/loadavg").read_text().split()
        runnable = int(fields[3].split("/")[0]) - 1
        load = float(fields[0])
    except (OSError, ValueError, IndexError):
        try:
            runnable, load = 0, os.getloadavg()[0]
        except OSError:
            return 0
    return max(0, runnable, round(load) - 1)


def free_cores() -> int:
    return max(1, cores() - busy_elsewhere())


def requested(threads: int | None = None) -> int | None:
    """The count asked for by ``threads`` or ``GENLAB_THREADS`` (None: choose automatically)."""
    if threads is None:
        raw = os.environ.get(ENV)
        if not raw:
            return None
        try:
            threads = int(raw)
        except ValueError:
            raise SpecError(f"{ENV} must be a whole number >= 1, got {raw!r}") from None
        field = ENV
    else:
        field = "threads"
    if threads < 1:
        raise SpecError(f"{field} must be >= 1, got {threads}")
    return threads


def choose(n_params: int, threads: int | None = None) -> int:
    """Intra-op threads for a model of ``n_params`` parameters (see the module docstring)."""
    asked = requested(threads)
    if asked is not None:
        return asked
    import torch

    return max(1, min(n_params // PARAMS_PER_THREAD, free_cores(), torch.get_num_threads()))


@contextmanager
def using(n: int) -> Iterator[int]:
    """Run the block with ``n`` torch threads, then restore the previous count."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield n
    finally:
        torch.set_num_threads(before)
