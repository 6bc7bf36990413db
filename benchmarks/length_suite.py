"""Length-generalization claims at full budget: wall time and verdict per claim, length curves.

    .venv/bin/python benchmarks/length_suite.py [--store DIR] [--budget full|smoke] [CLAIM ...]

Runs every ``length.*`` claim (or the ones named) with ``torch.set_num_threads(1)``, prints the
verdict, statistic, evidence, the per-cell table and the figure path of each, and ends with one line
of ``name=value`` pairs (``<claim>_verdict``, ``<claim>_wall_s``). Finished runs in the store are
reused, so a second call only re-judges; use a fresh ``--store`` to time a claim.
``--executor pool`` trains each claim's runs in two one-thread worker processes (both cores).
"""

from __future__ import annotations

import argparse
import time

import torch

from genlab.claims import CLAIMS
from genlab.claims.runner import run_claim, serial
from genlab.store import Store
from genlab.sweep import make_executor


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("claims", nargs="*", help="claim ids (default: every length.* claim)")
    ap.add_argument("--store", default="genlab-runs/length-suite")
    ap.add_argument("--budget", default="full", choices=["smoke", "full"])
    ap.add_argument(
        "--executor", default="serial", help="serial | pool | vmap (for each claim's runs)"
    )
    ap.add_argument("--workers", type=int, help="pool processes (default 2, one thread each)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    ids = args.claims or [e.name for e in CLAIMS.entries() if e.family == "length"]
    execute = serial if args.executor == "serial" else make_executor(args.executor, args.workers)
    store = Store(args.store)
    pairs = []
    for cid in ids:
        t0 = time.perf_counter()
        res = run_claim(CLAIMS.get(cid).obj, store, args.budget, progress=False, execute=execute)
        wall = time.perf_counter() - t0
        print(f"== {cid} ({args.budget}): {res.verdict} in {wall:.0f} s")
        print(res.evidence)
        print({k: round(v, 4) for k, v in res.statistic.items()})
        print(res.table.to_string(index=False))
        print(f"figure: {res.figure}\n")
        key = cid.replace(".", "_")
        pairs += [f"{key}_verdict={res.verdict.replace(' ', '_')}", f"{key}_wall_s={wall:.0f}"]
    print(" ".join(pairs))


if __name__ == "__main__":
    main()
