"""The three SCAN presets end to end: exact match per split beside the published baselines, and
wall time.

Runs ``scan-simple``, ``scan-jump`` and ``scan-length`` (LSTM encoder-decoder with attention, 2,000
steps of batch 64) into a throwaway store and prints, per preset, the greedy exact match on the
in-distribution ``val/main`` and on the shifted test split, Lake & Baroni's (2018) "overall-best"
result on that split, and the wall seconds. Target (issue 13): each preset finishes in minutes on
2 cores. Ends with one line of ``name=value`` pairs.

    .venv/bin/python benchmarks/scan_presets.py [--threads 1] [--steps 2000]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch

from genlab.engine import run_spec
from genlab.spec import load_run_spec
from genlab.store import Store

# Lake & Baroni (ICML 2018), exact match of their overall-best model (LSTM, 2 x 200, no
# attention, dropout 0.5, 100k single-example updates), quoted from the paper's text (not checked
# against a stored copy: see docs/compositional.md).
PUBLISHED = {"simple": 0.997, "length": 0.138, "addprim_jump": 0.0008}
PRESETS = {"scan-simple": "simple", "scan-jump": "addprim_jump", "scan-length": "length"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=2000)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    pairs = []
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(tmp)
        print(f"{'preset':<12} {'val':>7} {'test':>8} {'published':>9} {'wall_s':>7}")
        for preset, split in PRESETS.items():
            spec = load_run_spec(preset, [f"steps={args.steps}", f"eval.every={args.steps}"])
            t = time.perf_counter()
            final = run_spec(spec, store, progress=False).final
            wall = time.perf_counter() - t
            val, test = final["val/main:exact_match"], final[f"test/{split}:exact_match"]
            print(f"{preset:<12} {val:7.3f} {test:8.4f} {PUBLISHED[split]:9.4f} {wall:7.1f}")
            key = preset.removeprefix("scan-")
            pairs += [f"{key}_val={val:.4f}", f"{key}_test={test:.4f}", f"{key}_wall_s={wall:.1f}"]
    print(" ".join(pairs))


if __name__ == "__main__":
    main()
