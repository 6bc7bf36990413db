"""Every registered claim at a budget (default full) with the pool executor: a table of wall time
per claim, its verdict, the total per family and overall, then one line of ``name=value`` pairs.

    .venv/bin/python benchmarks/claims_suite.py [--store DIR] [--family grokking] [--only ID ...]

Each claim runs with its controls (they license its verdict) and its sequential seed rule (at
full, genlab's uniform rule: n seeds, then 2n while an interval straddles); the last line gives the suite's total wall and CPU time.
Resumable: the store keeps every finished run, so a rerun after a crash or Ctrl-C trains only what
is missing. Each claim's wall time is recorded in ``<store>/claims_suite.json`` (attempts of an
unfinished claim add up, as do the seeds a seed rule adds later; a claim whose runs changed
otherwise is timed again), so the table of a resumed suite still shows what each claim cost; use a
fresh ``--store`` (or ``--fresh``) to time everything again. Target (issue #18): every claim
<= 1,200 s on 2 cores with its controls (issue #36); the total goes in the README's Speed section.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch

from genlab.claims import CLAIMS
from genlab.claims.runner import cpu_seconds, run_claim
from genlab.store import Store

LIMIT_S = 1200.0  # issue #36: deciding may take 20 minutes a claim, controls and seeds included


def _load(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def _save(path: Path, records: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(records, indent=1, sort_keys=True))
    tmp.replace(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", default="genlab-runs/claims-suite")
    ap.add_argument("--budget", default="full", choices=["smoke", "full"])
    ap.add_argument("--family", action="append", help="only claims of this family (repeatable)")
    ap.add_argument("--only", nargs="+", metavar="ID", help="only these claim ids")
    ap.add_argument("--executor", default="pool", help="serial | pool | vmap (default pool)")
    ap.add_argument("--fresh", action="store_true", help="forget recorded wall times")
    ap.add_argument("--progress", action="store_true", help="per-run progress of the executor")
    args = ap.parse_args()
    torch.set_num_threads(1)

    entries = CLAIMS.entries()
    known = {e.name for e in entries}
    unknown = sorted(set(args.only or []) - known)
    if unknown:
        ap.error(f"unknown claim id(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    families = {e.family for e in entries}
    if args.family and not set(args.family) <= families:
        ap.error(f"--family must be among {', '.join(sorted(families))}")
    todo = [
        e
        for e in entries
        if (not args.family or e.family in args.family) and (not args.only or e.name in args.only)
    ]
    if args.only:  # in the order given (e.g. cheapest first)
        todo.sort(key=lambda e: args.only.index(e.name))

    store = Store(args.store)
    path = Path(args.store) / "claims_suite.json"
    records = {} if args.fresh else _load(path)
    print(
        f"{len(todo)} claim(s), budget {args.budget}, executor {args.executor}, store "
        f"{store.root}, load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    rows = []
    for e in todo:
        key = f"{e.name}@{args.budget}"
        rec = records.get(key, {"wall_s": 0.0, "cpu_s": 0.0, "complete": False})
        t0, c0 = time.perf_counter(), cpu_seconds()
        try:
            r = run_claim(e.obj, store, args.budget, progress=args.progress, execute=args.executor)
        finally:  # an interrupted claim keeps the time it has cost so far
            if not rec["complete"]:
                rec["wall_s"] += time.perf_counter() - t0
                rec["cpu_s"] = rec.get("cpu_s", 0.0) + cpu_seconds() - c0
            records[key] = rec
            _save(path, records)
        runs = ",".join(sorted(getattr(r, "run_ids", None) or []))
        before = set(filter(None, rec.get("runs", runs).split(",")))
        if rec["complete"] and before != set(runs.split(",")):  # this attempt trained what is new
            wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
            grew = before <= set(runs.split(","))  # a seed rule's later look: add to the first
            rec["wall_s"] = rec["wall_s"] + wall if grew else wall
            rec["cpu_s"] = rec.get("cpu_s", 0.0) + cpu if grew else cpu
        rec.update(complete=True, verdict=r.verdict, runs=runs)
        records[key] = rec
        _save(path, records)
        rows.append((e.family, e.name, r.verdict, rec["wall_s"], rec.get("cpu_s", 0.0)))
        flag = "  OVER 1200 s" if rec["wall_s"] > LIMIT_S else ""
        print(f"  {e.name:40s} {r.verdict:16s} {rec['wall_s']:8.1f} s{flag}", flush=True)

    print(f"\n{'family':22s} {'claim':40s} {'verdict':16s} {'wall s':>8s}")
    for fam, name, verdict, wall, _ in rows:
        print(f"{fam:22s} {name:40s} {verdict:16s} {wall:8.1f}")
    per_family: dict[str, float] = {}
    for fam, _, _, wall, _ in rows:
        per_family[fam] = per_family.get(fam, 0.0) + wall
    for fam, wall in per_family.items():
        print(f"{fam:22s} {'(total)':40s} {'':16s} {wall:8.1f}")
    total, cpu = sum(r[3] for r in rows), sum(r[4] for r in rows)
    over = [r[1] for r in rows if r[3] > LIMIT_S]
    slowest = max(rows, key=lambda r: r[3]) if rows else ("", "-", "", 0.0)
    print(f"{'all':22s} {'(total)':40s} {'':16s} {total:8.1f}")
    print(
        f"claims={len(rows)} total_s={total:.1f} total_cpu_s={cpu:.1f} over_1200s={len(over)} "
        f"slowest={slowest[1]} slowest_s={slowest[3]:.1f} "
        f"load_average={os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
