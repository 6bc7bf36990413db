"""Sweep throughput: 16 seeds of the grokking MLP (p = 23, width 64, full batch) with the serial, pool (2
workers) and vmap executors; prints runs per hour, the ratios to serial and the vmap peak memory.

Each executor runs in a fresh child process with the whole machine (serial and vmap as torch
threads, the pool as one single-threaded worker per core) (spawned, timed inside, after one-time imports) on an
empty store, so none of them profits from another's warm caches. Targets (issue #3): vmap >= 5x serial, pool >= 1.6x serial
on 2 cores. Numbers are noisy on a shared machine; rerun on an idle one before quoting them.

    .venv/bin/python benchmarks/sweep_throughput.py [--seeds 16] [--steps 500]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import tempfile
import time


def specs(seeds: int, steps: int, width: int = 64, batch: int = 0):
    from genlab.sweep import parse_sweep, plan

    sweep = parse_sweep({
        "name": "throughput", "base": "grokking", "seeds": seeds, "data_seeds": [0],
        "set": ["task.p=23", "model.name='mlp'", f"model.width={width}", "model.embed_dim=16",
                f"steps={steps}", "eval.every=100", "eval.log_points=10", "checkpoint_every=1000",
                *([f"batch_size={batch}"] if batch else [])],
        "unset": ["stop"] if batch else ["batch_size", "stop"],
    })  # fmt: skip
    return [p["spec"] for p in plan(sweep)]


def child(
    name: str, seeds: int, steps: int, width: int, batch: int, threads: int, q: mp.Queue
) -> None:
    import torch

    from genlab.store import Store
    from genlab.sweep import make_executor

    # every executor gets the whole machine: serial and vmap as threads, the pool as processes
    torch.set_num_threads(1 if name == "pool" else threads)
    todo = specs(seeds, steps, width, batch)
    execute = make_executor(name, 2 if name == "pool" else None)
    # one-time imports outside the timing: the first torch.optim optimiser imports torch._dynamo
    # (~3 s), paid once per process whatever the executor (pool workers inherit it by fork)
    torch.optim.AdamW([torch.zeros(1, requires_grad=True)])
    base_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    out = execute(todo, Store(tempfile.mkdtemp(prefix=f"bench-{name}-")), False)
    wall = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    q.put((name, wall, sum(o.status == "done" for o in out), base_mb, peak_mb))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=16)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--width", type=int, default=64, help="MLP hidden width (embeddings: 16)")
    ap.add_argument("--batch", type=int, default=0, help="minibatch size (0: full batch)")
    ap.add_argument(
        "--threads",
        type=int,
        default=os.cpu_count() or 1,
        help="torch threads of the serial and vmap processes (pool: 1 per worker)",
    )
    args = ap.parse_args()
    ctx = mp.get_context("spawn")
    results = {}
    print(
        f"{args.seeds} seeds x {args.steps} steps, grokking MLP p=23 width {args.width} "
        f"(2 hidden layers, embed 16, "
        f"{'batch ' + str(args.batch) if args.batch else 'full batch'}), {os.cpu_count()} cores, {args.threads} torch threads (pool: 1 per worker)"
    )
    for name in ("serial", "pool", "vmap"):
        q = ctx.Queue()
        proc = ctx.Process(
            target=child,
            args=(name, args.seeds, args.steps, args.width, args.batch, args.threads, q),
        )
        proc.start()
        res = q.get()
        proc.join()
        name, wall, done, base_mb, peak_mb = res
        results[name] = res
        print(f"{name:7s} {wall:7.1f} s  {done:2d} runs done  {3600 * done / wall:8.0f} runs/h  "
              f"peak RSS {peak_mb:.0f} MB (after imports {base_mb:.0f} MB)")  # fmt: skip
    serial = results["serial"][1]
    vmap_ratio = serial / results["vmap"][1]
    pool_ratio = serial / results["pool"][1]
    peak = results["vmap"][4]
    print(f"vmap/serial {vmap_ratio:.2f}x (target >= 5), pool(2)/serial {pool_ratio:.2f}x "
          f"(target >= 1.6); load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(
        f"vmap_vs_serial={vmap_ratio:.2f} pool_vs_serial={pool_ratio:.2f} vmap_peak_mb={peak:.0f}"
    )


if __name__ == "__main__":
    main()
