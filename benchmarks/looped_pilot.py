"""Pilot one arm of ``length.looped_depth`` (seed 0) with config, method and model overrides.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/looped_pilot.py '{"steps": 3000}' \
        [--arm looped|transformer] [--method per_loop] [--model '{"n_blocks": 2}'] [--store DIR]

The JSON overrides the claim's ``full`` config (``LoopedConfig``); ``--method`` replaces the arm's
method (default ``per_loop`` for the looped arm, ``erm`` otherwise), ``--model`` updates its model
params. Trains with one thread into ``--store`` (default a fresh temporary one) and prints the wall
time and, per evaluation, exact match and per-token accuracy on ``val/main`` and beyond the
training depths. The pilots behind the claim's docstring were run with it.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

import torch

from genlab.claims import CLAIMS
from genlab.engine import run_spec
from genlab.spec import parse_spec
from genlab.store import Store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config", nargs="?", default="{}", help="JSON overrides of the full config")
    ap.add_argument("--arm", default="looped", choices=["looped", "transformer"])
    ap.add_argument("--method", default=None, help="method name (default per the arm)")
    ap.add_argument("--model", default="{}", help="JSON updates of the model params")
    ap.add_argument("--store", default=None)
    args = ap.parse_args()
    torch.set_num_threads(1)
    claim = CLAIMS.get("length.looped_depth").obj
    cfg = claim.Config(**{**claim.budgets["full"], **json.loads(args.config)})
    arm = next(a for a in claim.arms(cfg) if a.labels == {**a.labels, "arm": args.arm, "seed": 0})
    data = arm.spec.model_dump(mode="json")
    method = args.method or ("per_loop" if args.arm == "looped" else "erm")
    data["method"] = {"name": method}
    data["model"]["params"].update(json.loads(args.model))
    spec = parse_spec(data)
    store = Store(args.store or tempfile.mkdtemp(prefix="looped-pilot-"))
    start = time.time()
    result = run_spec(spec, store, progress=False, threads=1)
    print(f"{spec.run_id}: {result.status}, wall {time.time() - start:.0f} s")
    m = store.metrics(spec.run_id)
    m = m[
        m["split"].isin(["val/main", "test/out_of_range"])
        & m["metric"].isin(["accuracy", "token_accuracy"])
    ]
    table = m.pivot_table(index="step", columns=["split", "metric"], values="value").round(3)
    print(table)
    last = table.iloc[-1]
    print(
        f"run_id={spec.run_id} wall_s={time.time() - start:.0f} "
        f"val_exact_match={last[('val/main', 'accuracy')]:.3f} "
        f"out_of_range_exact_match={last[('test/out_of_range', 'accuracy')]:.3f}"
    )


if __name__ == "__main__":
    main()
