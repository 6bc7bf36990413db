"""The Ray executor (extra ``genlab[ray]``): the sweep as Ray tasks, results written by the driver.

Specs are packed into tasks (``pack``): each stackable group (see ``genlab.sweep.vmap``) becomes one
task, cut at ``pack_size`` replicas, so a task trains its pack with the vmap executor (or serially
when the model cannot be stacked) in a scratch store on the worker and returns the runs as plain
data; the driver alone writes them to the store (``genlab.sweep.transfer``). Without ``address``,
a local Ray is started on the loopback interface; with it, the driver joins that cluster. Finished
ids are skipped before anything is submitted, so a killed sweep resumes by running it again.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from genlab.errors import SpecError
from genlab.spec import RunSpec
from genlab.store import Store
from genlab.sweep.base import Outcome, pending
from genlab.sweep.vmap import stack_groups

INSTALL = "the ray executor needs Ray: pip install 'genlab[ray]'"


def pack(specs: Sequence[RunSpec], pack_size: int = 16) -> list[list[RunSpec]]:
    """Ray tasks: the specs grouped so that each task's specs can be stacked (at most ``pack_size``)."""
    if pack_size < 1:
        raise SpecError(f"pack_size must be >= 1, got {pack_size}")
    return stack_groups(specs, max_group=pack_size)


def train_pack(spec_jsons: list[str], threads: int = 1) -> list[dict]:
    """Train one pack in a scratch store and return its runs (this runs inside a Ray worker)."""
    import json
    import shutil
    import tempfile

    import torch

    from genlab.spec import parse_spec
    from genlab.sweep.lifeline import die_with_parent
    from genlab.sweep.transfer import export_runs
    from genlab.sweep.vmap import vmap_executor

    die_with_parent()  # the worker's parent is its raylet (see ray_executor)
    torch.set_num_threads(threads)
    root = tempfile.mkdtemp(prefix="genlab-ray-")
    try:
        store = Store(root)
        specs = [parse_spec(json.loads(s)) for s in spec_jsons]
        vmap_executor()(specs, store, False)
        return export_runs(store, [s.run_id for s in specs])
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _require_ray():
    try:
        import ray
    except ImportError:
        raise SpecError(INSTALL) from None
    return ray


def ray_executor(address: str | None = None, workers: int | None = None, pack_size: int = 16):
    """An executor on Ray: a local loopback Ray (``workers`` CPUs) or the cluster at ``address``."""
    _require_ray()

    def execute(specs: Sequence[RunSpec], store: Store, progress: bool = True) -> list[Outcome]:
        from genlab.sweep.transfer import import_runs

        ray = _require_ray()
        todo, outcomes = pending(specs, store)
        if not todo:
            return outcomes
        started = not ray.is_initialized()
        if started:
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                ray.init(
                    num_cpus=workers or os.cpu_count() or 1,
                    include_dashboard=False,
                    _node_ip_address="127.0.0.1",
                    log_to_driver=False,
                )
        try:
            task = ray.remote(num_cpus=1)(train_pack)
            packs = pack(todo, pack_size)
            ids = {}
            for p in packs:
                ids[task.remote([s.canonical_json() for s in p])] = [s.run_id for s in p]
            refs, done = list(ids), 0
            while refs:
                ready, refs = ray.wait(refs, num_returns=1)
                for ref in ready:
                    payload = ray.get(ref)
                    outcomes += import_runs(store, payload)
                    back = {p["run_id"] for p in payload}
                    outcomes += [
                        Outcome(r, "failed", "the Ray task did not train it")
                        for r in ids[ref]
                        if r not in back
                    ]
                    done += 1
                    if progress:
                        print(
                            f"[ray {done}/{len(packs)}] {len(payload)} runs stored",
                            file=sys.stderr,
                            flush=True,
                        )
        finally:
            if started:
                ray.shutdown()
        return outcomes

    execute.__name__ = "ray"
    return execute
