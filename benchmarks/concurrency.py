"""Concurrent runs share the machine fairly: one run alone, then two copies at once (issue 19).

Each run is a ``genlab run`` process (by default the issue's ``grokking task.p=23 batch_size=null
steps=600 stop=[]``), different seeds, one store. It prints each command's wall time and its
training time (``wall_s`` in the store), and the per-run slowdown of the pair against the single
run: with 2 cores, a fair share is 2x; the target is <= 2.2x. Before the thread policy the pair
took 40x (each process spun all cores' OpenMP threads over tiny ops).

``--old`` also times the pair as genlab ran before (all cores' threads, OpenMP's spinning wait),
as a comparison: it takes minutes on 2 cores.

    python benchmarks/concurrency.py [--copies 2] [--old] [-- extra overrides]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

RUN = ["grokking", "task.p=23", "batch_size=null", "steps=600", "stop=[]"]


def launch(store: str, seed: int, extra: list[str], env: dict[str, str]) -> subprocess.Popen:
    cmd = [
        sys.executable,
        "-m",
        "genlab",
        "run",
        *RUN,
        f"seed={seed}",
        *extra,
        "--store",
        store,
        "--json",
        "--no-plot",
    ]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)


def timed(
    n: int, extra: list[str], env: dict[str, str], seed0: int
) -> list[tuple[float, float, int]]:
    """Start ``n`` runs at once; (command wall time, training wall_s, threads) of each."""
    store = tempfile.mkdtemp(prefix="genlab-conc-")
    t0 = time.perf_counter()
    procs = [launch(store, seed0 + i, extra, env) for i in range(n)]
    ended: dict[int, float] = {}
    try:
        while len(ended) < n:
            for i, p in enumerate(procs):
                if i not in ended and p.poll() is not None:
                    ended[i] = time.perf_counter() - t0
            time.sleep(0.05)
    finally:  # interrupted: leave no run behind
        for p in procs:
            if p.poll() is None:
                p.kill()
    out = []
    for i, p in enumerate(procs):
        stdout, stderr = p.communicate()
        if p.returncode != 0:
            sys.exit(f"run failed ({p.returncode}): {stderr[-2000:]}")
        res = json.loads(stdout)
        out.append((ended[i], res["wall_s"], res["threads"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=2)
    ap.add_argument("--old", action="store_true", help="also time the pair the old way")
    ap.add_argument("extra", nargs="*", help="overrides added to the run")
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("GENLAB_THREADS", "OMP_NUM_THREADS")}
    print(f"cores {os.cpu_count()}, load {os.getloadavg()[0]:.1f} (1 min) at start")
    (single,) = timed(1, args.extra, env, seed0=0)
    print(
        f"single: command {single[0]:.1f}s, training {single[1]:.1f}s, {single[2]} thread(s)",
        flush=True,
    )
    pair = timed(args.copies, args.extra, env, seed0=10)
    for i, (cmd_s, train_s, n) in enumerate(pair):
        print(f"copy {i}: command {cmd_s:.1f}s, training {train_s:.1f}s, {n} thread(s)")
    slow_cmd = max(c for c, _, _ in pair) / single[0]
    slow_train = max(t for _, t, _ in pair) / single[1]
    print(
        f"per-run slowdown with {args.copies} at once: command {slow_cmd:.2f}x, "
        f"training {slow_train:.2f}x (target <= 2.2x)"
    )
    old = ""
    if args.old:
        cores = str(os.cpu_count() or 1)
        old_env = {**env, "GENLAB_THREADS": cores, "OMP_WAIT_POLICY": "ACTIVE"}
        (alone,) = timed(1, args.extra, old_env, seed0=20)
        print(f"old way, single: command {alone[0]:.1f}s", flush=True)
        pair_old = timed(args.copies, args.extra, old_env, seed0=30)
        slow_old = max(c for c, _, _ in pair_old) / alone[0]
        print(
            f"old way ({cores} threads, active wait): single {alone[0]:.1f}s, "
            f"pair {max(c for c, _, _ in pair_old):.1f}s, slowdown {slow_old:.2f}x"
        )
        old = f" old_slowdown={slow_old:.2f}"
    print(
        f"single_s={single[0]:.2f} pair_s={max(c for c, _, _ in pair):.2f} "
        f"slowdown={slow_cmd:.2f} train_slowdown={slow_train:.2f}{old} "
        f"ok={int(slow_cmd <= 2.2)}"
    )


if __name__ == "__main__":
    main()
