"""Choose an executor by name, checking its options before any work starts."""

from __future__ import annotations

import os

from genlab.errors import SpecError
from genlab.sweep.base import Executor

EXECUTORS = ("serial", "pool", "vmap", "ray")


def make_executor(name: str, workers: int | None = None, address: str | None = None) -> Executor:
    """``serial`` | ``pool`` (``workers``, default 2) | ``vmap`` (``workers`` processes, default
    one per core) | ``ray`` (``workers`` = tasks in flight, ``address`` of a cluster). Options
    that do not apply to an executor are errors."""
    if name not in EXECUTORS:
        raise SpecError(f"executor must be one of {', '.join(EXECUTORS)}, got {name!r}")
    if workers is not None and workers < 1:
        raise SpecError(f"--workers must be >= 1, got {workers}")
    if workers is not None and name == "serial":
        raise SpecError("--workers applies to the pool, vmap and ray executors, not to 'serial'")
    if address is not None and name != "ray":
        raise SpecError(f"--address applies to the ray executor only, not to {name!r}")
    if name == "serial":
        from genlab.sweep.serial import serial

        return serial
    if name == "pool":
        from genlab.sweep.pool import pool

        return pool(workers or 2)
    if name == "vmap":
        from genlab.sweep.vmap import vmap_executor

        return vmap_executor(workers=workers or os.cpu_count() or 1)
    from genlab.sweep.ray_exec import ray_executor

    return ray_executor(address=address, workers=workers)
