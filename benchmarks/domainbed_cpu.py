"""DomainBed on a CPU: one ERM run on colored_digits and one on rotated_digits, 5,001 steps each.

DomainBed's default hyperparameters (Adam, lr 1e-3, batch 64 per environment, no weight decay),
the presets' MLP, evaluation every 500 steps. Prints wall seconds, steps/s and the share of the
run spent in evaluation, then one line of ``name=value`` pairs. Targets (issue #5): under 60 s
per run on 2 cores, evaluation under 20% of the run.

    .venv/bin/python benchmarks/domainbed_cpu.py [--steps 5001] [--threads 1]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch

import genlab.engine.train as train
from genlab.engine import run_spec
from genlab.spec import load_run_spec
from genlab.store import Store


def timed_evaluate(clock: dict[str, float]):
    inner = train.evaluate

    def wrapper(prep, step):
        t = time.perf_counter()
        try:
            return inner(prep, step)
        finally:
            clock["eval"] += time.perf_counter() - t

    return wrapper


def bench(preset: str, steps: int, store: Store) -> dict[str, float]:
    spec = load_run_spec(
        preset,
        [f"steps={steps}", "eval.every=500", "eval.log_points=0", f"checkpoint_every={steps}"],
    )
    clock = {"eval": 0.0}
    original = train.evaluate
    train.evaluate = timed_evaluate(clock)
    try:
        t = time.perf_counter()
        result = run_spec(spec, store, progress=False)
        wall = time.perf_counter() - t
    finally:
        train.evaluate = original
    worst = min(
        v for k, v in result.final.items() if k.startswith("test/") and k.endswith(":accuracy")
    )
    return {
        "wall_s": wall,
        "steps_per_s": steps / wall,
        "eval_share": clock["eval"] / wall,
        "worst_test_acc": worst,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=5001)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(tmp)
        for name, preset in (("colored", "dg-colored"), ("rotated", "dg-rotated")):
            r = bench(preset, args.steps, store)
            print(
                f"{preset}: ERM {args.steps} steps in {r['wall_s']:.1f} s, "
                f"{r['steps_per_s']:.0f} "
                f"steps/s, evaluation {100 * r['eval_share']:.1f}% of the run, "
                f"held-out accuracy {r['worst_test_acc']:.3f}"
            )
            out.update({f"{name}_{k}": v for k, v in r.items()})
    print(" ".join(f"{k}={v:.4g}" for k, v in out.items()))


if __name__ == "__main__":
    main()
