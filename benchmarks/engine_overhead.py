"""Engine overhead: genlab's ``run_spec`` against a bare PyTorch loop of the same model, batches
and optimiser, on a CNN (DomainBed's MNIST_CNN shape, rotated digits, batch 64 per environment)
and the grokking transformer (d = 128, p = 97, batch 512).

The bare loop is what one would write by hand: the model, optimiser and batch sampler that
``genlab.engine.prepare`` builds for the spec, then ``zero_grad``, cross-entropy on the pooled
batches, ``backward``, ``step``. The engine's time counts everything ``run_spec`` does (method
and scheduler calls, the per-step loss check, store writes, checkpoints) except building the
data and model and the evaluations, which are timed and printed apart (the bare loop does
neither). The two alternate ``--repeat`` times in one process and the medians are compared, so a
shared machine's load falls on both alike. Target (issue #18): overhead <= 5% for both models.

    .venv/bin/python benchmarks/engine_overhead.py [--model cnn|transformer|both] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import torch

import genlab.engine.train as train
from genlab.engine import run_spec
from genlab.losses import cross_entropy
from genlab.spec import RunSpec, load_run_spec
from genlab.store import Store

WORKLOADS = {
    "cnn": ("dg-rotated", ["model.name='cnn'", "model.params={}", "steps=200"]),
    "transformer": ("grokking", ["stop=[]", "steps=60"]),
}


def _spec(model: str, steps: int | None) -> RunSpec:
    preset, sets = WORKLOADS[model]
    sets = [*sets, *([f"steps={steps}"] if steps else [])]
    spec = load_run_spec(preset, sets)
    # evaluate at step 0 and at the end only; one checkpoint half-way, as the engine writes them
    return load_run_spec(
        preset,
        [
            *sets,
            f"eval.every={spec.steps}",
            "eval.log_points=0",
            f"checkpoint_every={max(1, spec.steps // 2)}",
        ],
    )


def engine(spec: RunSpec) -> dict[str, float]:
    """``run_spec`` on a fresh store; wall and CPU seconds of the whole, of building the data and
    model, and of evaluating; ``train`` is the rest."""
    clock = {"build": 0.0, "eval": 0.0, "build_cpu": 0.0, "eval_cpu": 0.0}
    real_prepare, real_evaluate = train.prepare, train.evaluate

    def timed(key, fn):
        def wrapper(*args, **kwargs):
            t, c = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                clock[key] += time.perf_counter() - t
                clock[key + "_cpu"] += time.process_time() - c

        return wrapper

    train.prepare, train.evaluate = timed("build", real_prepare), timed("eval", real_evaluate)
    try:
        t, c = time.perf_counter(), time.process_time()
        run_spec(spec, Store(tempfile.mkdtemp(prefix="overhead-")), progress=False)
        clock["total"], clock["total_cpu"] = time.perf_counter() - t, time.process_time() - c
    finally:
        train.prepare, train.evaluate = real_prepare, real_evaluate
    clock["train"] = clock["total"] - clock["build"] - clock["eval"]
    clock["train_cpu"] = clock["total_cpu"] - clock["build_cpu"] - clock["eval_cpu"]
    return clock


def bare(spec: RunSpec) -> tuple[float, float]:
    """The hand-written loop over the same model, optimiser and batches; wall and CPU seconds."""
    prep = train.prepare(spec)
    model, opt, sampler = prep.model.train(), prep.optimizer, prep.sampler
    t, c = time.perf_counter(), time.process_time()
    for _ in range(spec.steps):
        batches = list(sampler.next().values())
        x = torch.cat([b[0] for b in batches]) if len(batches) > 1 else batches[0][0]
        y = torch.cat([b[1] for b in batches]) if len(batches) > 1 else batches[0][1]
        opt.zero_grad(set_to_none=True)
        cross_entropy(model(x), y).backward()
        opt.step()
    return time.perf_counter() - t, time.process_time() - c


def bench(model: str, repeat: int, steps: int | None) -> tuple[float, float]:
    spec = _spec(model, steps)
    run_spec(spec.model_copy(update={"steps": 2}), Store(tempfile.mkdtemp()), progress=False)
    eng, raw = [], []
    for _ in range(repeat):  # alternate, so load falls on both alike
        eng.append(engine(spec))
        raw.append(bare(spec))
    train_s, bare_s = (
        statistics.median(c["train"] for c in eng),
        statistics.median(r[0] for r in raw),
    )
    cpu_e, cpu_b = (
        statistics.median(c["train_cpu"] for c in eng),
        statistics.median(r[1] for r in raw),
    )
    over, over_cpu = train_s / bare_s - 1, cpu_e / cpu_b - 1
    pairs = ", ".join(
        f"{100 * (c['train'] / r[0] - 1):+.1f}%" for c, r in zip(eng, raw, strict=True)
    )
    print(
        f"{model}: {spec.steps} steps ({spec.model.name} on {spec.task.name}, batch "
        f"{spec.batch_size}), {repeat} repeat(s): engine {train_s:.2f} s training "
        f"(+ {statistics.median(c['build'] for c in eng):.2f} s building, "
        f"{statistics.median(c['eval'] for c in eng):.2f} s evaluating), bare loop "
        f"{bare_s:.2f} s: overhead {100 * over:+.1f}% wall, {100 * over_cpu:+.1f}% CPU "
        f"(target <= 5%); pairs {pairs}",
        flush=True,
    )
    return over, over_cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="both", choices=["cnn", "transformer", "both"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--steps", type=int, help="training steps (default: 200 cnn, 60 transformer)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    names = ["cnn", "transformer"] if args.model == "both" else [args.model]
    out = {}
    for m in names:
        over, over_cpu = bench(m, args.repeat, args.steps)
        out[f"{m}_overhead_pct"], out[f"{m}_overhead_cpu_pct"] = (
            f"{100 * over:.1f}",
            f"{100 * over_cpu:.1f}",
        )
    out["load_average"] = f"{os.getloadavg()[0]:.1f}"
    print(" ".join(f"{k}={v}" for k, v in out.items()))


if __name__ == "__main__":
    main()
