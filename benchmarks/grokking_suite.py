"""Run every grokking claim (catalogue cluster C1) at a budget; print each one's wall time, verdict
and evidence, then one line of ``name=value`` pairs.

    .venv/bin/python benchmarks/grokking_suite.py                      # full budgets, all claims
    .venv/bin/python benchmarks/grokking_suite.py --budget smoke --claims grokking.linear

Target (issue #4): each claim under 10 minutes on 2 cores, the whole suite under 45 minutes.
Runs already in the store are reused, so the wall time of a second call is near zero; use a fresh
``--store`` to measure. ``--executor pool`` trains each claim's runs in two one-thread worker
processes (both cores); the default trains them one after another on ``--threads`` threads.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch

from genlab.claims import CLAIMS
from genlab.claims.runner import run_claim, serial
from genlab.store import Store
from genlab.sweep import make_executor


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", default="full", choices=["smoke", "full"])
    ap.add_argument("--claims", nargs="*", help="claim ids (default: every grokking claim)")
    ap.add_argument("--store", help="store directory (default: a fresh temporary one)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--executor", default="serial", help="serial | pool | vmap (for each claim's runs)"
    )
    ap.add_argument("--workers", type=int, help="pool processes (default 2, one thread each)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    ids = args.claims or [e.name for e in CLAIMS.entries() if e.family == "grokking"]
    execute = serial if args.executor == "serial" else make_executor(args.executor, args.workers)
    store = Store(args.store or tempfile.mkdtemp(prefix="genlab-grokking-"))
    summary: dict[str, str] = {}
    t_all = time.perf_counter()
    for cid in ids:
        t0 = time.perf_counter()
        r = run_claim(CLAIMS.get(cid).obj, store, args.budget, progress=False, execute=execute)
        wall = time.perf_counter() - t0
        print(
            f"{cid}: {r.verdict} in {wall:.1f} s\n  {r.evidence}\n  figure: {r.figure}", flush=True
        )
        short = cid.removeprefix("grokking.")
        summary[f"{short}_s"] = f"{wall:.1f}"
        summary[f"{short}_verdict"] = r.verdict.replace(" ", "_")
    summary["total_s"] = f"{time.perf_counter() - t_all:.1f}"
    summary["store"] = str(store.root)
    print(" ".join(f"{k}={v}" for k, v in summary.items()))


if __name__ == "__main__":
    main()
