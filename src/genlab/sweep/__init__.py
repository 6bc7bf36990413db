"""Sweeps: a ``SweepSpec`` expanded into RunSpecs and trained by an executor.

A sweep comes from a file (``load_sweep``) or from the command line (``multirun``:
``dg-colored method.name=erm,mixup seed=0..2``). Executors: ``serial``, ``pool`` (worker
processes), ``vmap`` (stacked replicas with torch.func), ``ray`` (extra ``genlab[ray]``). Each
takes ``(specs, store, progress)`` and returns ``Outcome``s; finished ids are skipped and runs left
``running`` by a dead process resume from their checkpoint.

Floor: above the engine; below ``report``, ``claims`` and ``api`` (``genlab.sweep(...)`` is
made callable by the root package, not here).
"""

from genlab.sweep.base import Executor, Outcome
from genlab.sweep.executors import EXECUTORS, make_executor
from genlab.sweep.multirun import multirun
from genlab.sweep.runner import SweepResult, plan, run_sweep
from genlab.sweep.spec import SweepSpec, load_sweep, parse_sweep

__all__ = [
    "EXECUTORS",
    "Executor",
    "Outcome",
    "SweepResult",
    "SweepSpec",
    "load_sweep",
    "make_executor",
    "multirun",
    "parse_sweep",
    "plan",
    "run_sweep",
]
