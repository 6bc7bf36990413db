"""``genlab soup`` speed: the weight path between two finished CNN runs of multicolor_digits.

Trains a pre-trained run and its fine-tuning (once; skipped when the store has them), then times
``interpolation_path`` over 11 lambdas against the baseline of evaluating the two finished models
once each in the same process (the least any path needs), and the whole command in a subprocess
(Python start and imports included). Target (issue #14): the command finishes in seconds.

    .venv/bin/python benchmarks/soup.py [--store DIR] [--lambdas 0:1:11]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time

import torch

from genlab.engine import run_spec
from genlab.spec import parse_spec
from genlab.store import Store
from genlab.weights.load import build_task_data, finished_spec, load_model
from genlab.weights.path import evaluate_state, interpolation_path, parse_lambdas


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", default=None)
    ap.add_argument("--lambdas", default="0:1:11")
    args = ap.parse_args()
    torch.set_num_threads(1)
    store = Store(args.store or tempfile.mkdtemp(prefix="genlab-soup-"))
    cnn = {"name": "cnn", "params": {"channels": [32, 64]}}
    common = {"steps": 300, "batch_size": 64, "eval": {"every": 300, "log_points": 0}}
    task = {"name": "multicolor_digits", "params": {"correlated": [0, 1, 2, 3]}}
    a = run_spec(parse_spec({**common, "task": task, "model": cnn}), store, progress=False)
    ft_task = {"name": "multicolor_digits", "params": {"correlated": [4, 5, 6, 7]}}
    b = run_spec(
        parse_spec(
            {**common, "task": ft_task, "model": {"name": "from_run", "params": {"run": a.run_id}}}
        ),
        store,
        progress=False,
    )
    data = build_task_data(finished_spec(store, b.run_id))
    t0 = time.perf_counter()
    for rid in (a.run_id, b.run_id):
        m = load_model(store, rid, data.info)
        evaluate_state(m, m.state_dict(), data, "interpolate")
    base = time.perf_counter() - t0
    lams = parse_lambdas(args.lambdas)
    t0 = time.perf_counter()
    interpolation_path(store, a.run_id, b.run_id, lams, data)
    path = time.perf_counter() - t0
    t0 = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "genlab",
            "soup",
            a.run_id,
            b.run_id,
            "--lambdas",
            args.lambdas,
            "--store",
            str(store.root),
        ],
        check=True,
        capture_output=True,
    )
    command = time.perf_counter() - t0
    print(f"two endpoint evaluations: {base:.2f} s")
    print(f"path over {len(lams)} lambdas: {path:.2f} s ({path / base:.1f}x the endpoints)")
    print(f"genlab soup command (process start included): {command:.2f} s")
    print(
        f"endpoints_s={base:.3f} path_s={path:.3f} ratio={path / base:.2f} command_s={command:.2f}"
    )


if __name__ == "__main__":
    main()
