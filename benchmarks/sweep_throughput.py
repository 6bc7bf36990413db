"""Sweep throughput: many seeds with the serial, pool and vmap executors, on two workloads.

- ``mlp``: 16 seeds x 500 steps of the grokking MLP (p = 23, width 64, embed 16, full batch);
- ``transformer``: 8 seeds x 60 steps of the grokking preset's transformer (d = 128, 2 layers,
  p = 97, batch 512).

Each arm runs in a fresh spawned process (timed inside, after one-time imports) on an empty store:
serial and a single vmap process at 1 thread and at one thread per core (the best is kept), the
pool and vmap as one single-threaded worker process per core. ``--repeat`` interleaves the arms that many times and
takes each arm's median, so a shared machine's load falls on all of them alike. The vmap process
then times its stacked step alone and counts its FLOPs (``torch.utils.flop_counter``), and the
serial one a single model's engine step, both beside a float32 matmul peak measured in the same
process. Targets (issue #18): vmap_vs_pool >= 3 (mlp) and >= 2 (transformer) on an idle 2-core
machine.

The step figures bound what stacking can give. The pool trains each replica with the engine's
single-model step (``single_step_gflops``); one stacked step does the same arithmetic for all K
replicas, so per core it is ``vmap_step_gflops / single_step_gflops`` times faster
(``step_speedup``), and even at the matmul peak it could be at most ``matmul_peak_gflops /
single_step_gflops`` times faster (``step_ceiling``). Where that ceiling is below a target, the
training steps alone cannot reach it; whatever vmap gains beyond ``step_speedup`` comes from the
work the pool repeats per run (start-up, evaluation, store writes). Measured Dec 1 2026 on an
idle machine, one thread, the MLP workload's 8 replicas per process: in the vmap loop the
stacked gradients take 87% of the wall time (the update 4%, evaluation 2%, the rest 6%); a
hand-written step of the same MLP (``baddbmm`` forward, autograd backward, no optimiser) takes
2.4 ms against the vmapped gradients' 3.0-3.4 ms and eight single-model engine steps' 4.8 ms, so
even that is 2.0x per core before its update; 3x would need the whole step, update included, in
1.6 ms (154 MFLOP), ~96 GFLOP/s, 91% of the 106 GFLOP/s peak.

    .venv/bin/python benchmarks/sweep_throughput.py [--workload mlp|transformer|both] [--repeat 3]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import statistics
import sys
import tempfile
import time

WORKLOADS = {
    "mlp": dict(
        seeds=16,
        steps=500,
        base="grokking",
        set=[
            "task.p=23",
            "model.name='mlp'",
            "model.width=64",
            "model.embed_dim=16",
            "eval.every=100",
            "eval.log_points=10",
        ],
        unset=["batch_size", "stop"],
    ),
    "transformer": dict(
        seeds=8,
        steps=60,
        base="grokking",
        set=["eval.every=50", "eval.log_points=5"],
        unset=["stop"],
    ),
}


def specs(workload: str, seeds: int | None = None, steps: int | None = None) -> list:
    from genlab.sweep import parse_sweep, plan

    w = WORKLOADS[workload]
    sweep = parse_sweep(
        {
            "name": f"throughput-{workload}",
            "base": w["base"],
            "seeds": seeds or w["seeds"],
            "data_seeds": [0],
            "unset": w["unset"],
            "set": [*w["set"], f"steps={steps or w['steps']}", "checkpoint_every=100000"],
        }
    )
    return [p["spec"] for p in plan(sweep)]


def matmul_peak(n: int = 1024, reps: int = 20) -> float:
    """Float32 GFLOP/s of an n x n matmul at the current thread count (best of ``reps``)."""
    import torch

    a, b = torch.randn(n, n), torch.randn(n, n)
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    return 2 * n**3 / best / 1e9


def _flops(fn) -> float:
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as fc:
        fn()
    return fc.get_total_flops()


def _rate(fn, flops: float, reps: int = 10) -> float:
    fn()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    return flops * reps / (time.perf_counter() - t) / 1e9


def stacked_step_gflops(todo: list) -> float:
    """Achieved GFLOP/s of the vmap executor's step (gradient and update of every replica)."""
    import torch

    from genlab.engine.train import prepare
    from genlab.sweep.stacked import Stacked
    from genlab.sweep.vec_optim import VecOptimizer

    st = Stacked([prepare(s) for s in todo], shared_data=True)
    opt = VecOptimizer(todo[0].optimizer, st.trainable, st.slots)
    lr = torch.full((len(todo), 1), todo[0].optimizer.lr, dtype=torch.float64)
    wd = torch.full_like(lr, todo[0].optimizer.weight_decay)

    def step() -> None:
        _, g = st.grads()
        with torch.no_grad():
            opt.update(st.flat, g, lr, wd)

    return _rate(step, _flops(lambda: st.grads()))


def single_step_gflops(spec) -> float:
    """Achieved GFLOP/s of the engine's step of one model (what serial and the pool run)."""
    from genlab.engine.train import prepare

    p = prepare(spec)

    def step() -> None:
        p.method.step(p.model, p.optimizer, p.sampler.next())

    return _rate(step, _flops(lambda: p.method.loss(p.model, p.sampler.next())[0].backward()))


def child(workload: str, arm: tuple, seeds: int, steps: int, src: str | None, q: mp.Queue) -> None:
    name, workers, threads = arm[:3]
    if src:  # another checkout's genlab (--compare-src), its vmap in this process
        sys.path.insert(0, src)
    import torch

    from genlab.store import Store
    from genlab.sweep import make_executor

    torch.set_num_threads(threads)
    todo = specs(workload, seeds, steps)
    execute = make_executor(name, None if name == "serial" or src else workers)
    # one-time imports outside the timing: the first torch.optim optimiser imports torch._dynamo
    # (~3 s), paid once per process whatever the executor (pool workers inherit it by fork)
    torch.optim.AdamW([torch.zeros(1, requires_grad=True)])
    t0, c0 = time.perf_counter(), _cpu()
    out = execute(todo, Store(tempfile.mkdtemp(prefix=f"bench-{name}-")), False)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    done = sum(o.status == "done" for o in out)
    extra = {}
    if name in ("vmap", "serial") and workers == 1 and not src:
        extra["peak"] = matmul_peak()
        extra["step"] = stacked_step_gflops(todo) if name == "vmap" else single_step_gflops(todo[0])
    q.put((wall, cpu, done, extra))


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the pool's workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run_arm(ctx, workload: str, arm: tuple, seeds: int, steps: int, src: str | None) -> tuple:
    q = ctx.Queue()
    proc = ctx.Process(target=child, args=(workload, arm, seeds, steps, src, q))
    proc.start()
    res = q.get()
    proc.join()
    return res


def _label(arm: tuple) -> str:
    name, workers, threads = arm[:3]
    if name == "serial":
        return f"serial({threads} thr)"
    return f"{name}({workers} proc x {threads} thr)" + (" [compare-src]" if len(arm) > 3 else "")


def bench(workload: str, args: argparse.Namespace) -> dict[str, str]:
    w = WORKLOADS[workload]
    seeds, steps = args.seeds or w["seeds"], args.steps or w["steps"]
    cores = os.cpu_count() or 1
    threads = sorted({int(t) for t in args.threads.split(",")})
    # (executor, processes, torch threads per process): serial and one vmap process at each thread
    # count; the pool and vmap with one single-threaded process per core
    arms = [("serial", 1, t) for t in threads] + [("pool", cores, 1)]
    arms += [("vmap", 1, t) for t in threads] + [("vmap", cores, 1)]
    arms = list(dict.fromkeys(arms))
    if args.compare_src:
        arms.append(("vmap", 1, threads[0], "compare"))
    ctx = mp.get_context("spawn")
    walls: dict[tuple, list[float]] = {a: [] for a in arms}
    cpus: dict[tuple, list[float]] = {a: [] for a in arms}
    extras: dict[tuple, dict] = {}
    print(
        f"\n{workload}: {seeds} seeds x {steps} steps, {cores} cores, {args.repeat} repeat(s), "
        f"load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    for r in range(args.repeat):
        for arm in arms:
            src = args.compare_src if len(arm) > 3 else None
            wall, cpu, done, extra = run_arm(ctx, workload, arm, seeds, steps, src)
            walls[arm].append(wall)
            cpus[arm].append(cpu)
            extras.setdefault(arm, extra)
            more = "".join(f"  {k} {v:.0f} GFLOP/s" for k, v in extra.items())
            print(
                f"  [{r + 1}] {_label(arm):28s} {wall:7.2f} s wall {cpu:7.2f} s cpu  "
                f"{done:2d}/{seeds} done{more}",
                flush=True,
            )
    med = {a: statistics.median(v) for a, v in walls.items()}
    cpu = {a: statistics.median(v) for a, v in cpus.items()}
    best = {
        n: min((a for a in arms if a[0] == n and len(a) == 3), key=med.get)
        for n in ("serial", "pool", "vmap")
    }
    serial, pool, vmap = (med[best[n]] for n in ("serial", "pool", "vmap"))
    one = ("vmap", 1, 1)
    ex, ser = extras[one], extras[("serial", 1, 1)]
    out = {
        "vmap_vs_pool": pool / vmap,
        "vmap_vs_serial": serial / vmap,
        "pool_vs_serial": serial / pool,
        "cpu_vmap_vs_pool": cpu[best["pool"]] / cpu[best["vmap"]],
        "serial_threads": best["serial"][2],
        "vmap_procs": best["vmap"][1],
        "vmap_threads": best["vmap"][2],
        "vmap_step_gflops": ex["step"],
        "single_step_gflops": ser["step"],
        "matmul_peak_gflops": ex["peak"],
        "step_speedup": ex["step"] / ser["step"],
        "step_ceiling": ex["peak"] / ser["step"],
    }
    print(
        f"  medians: serial {serial:.2f} s [{_label(best['serial'])}], pool {pool:.2f} s, vmap "
        f"{vmap:.2f} s [{_label(best['vmap'])}]; vmap/pool {out['vmap_vs_pool']:.2f}x (in CPU "
        f"seconds {out['cpu_vmap_vs_pool']:.2f}x), vmap/serial {out['vmap_vs_serial']:.2f}x, "
        f"pool/serial {out['pool_vs_serial']:.2f}x"
    )
    print(
        f"  one thread: stacked step {ex['step']:.0f} GFLOP/s, single-model step "
        f"{ser['step']:.0f} GFLOP/s, matmul peak {ex['peak']:.0f} GFLOP/s: per core the stacked "
        f"step is {out['step_speedup']:.2f}x the single-model steps (at most "
        f"{out['step_ceiling']:.2f}x at the peak)"
    )
    if args.compare_src:
        before = med[arms[-1]]
        out["vmap_vs_compare"] = before / med[one]
        print(
            f"  {_label(one)} {med[one]:.2f} s vs compare-src {before:.2f} s: "
            f"{out['vmap_vs_compare']:.2f}x"
        )
    return {k: f"{v:.2f}" if isinstance(v, float) else str(v) for k, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", default="both", choices=["mlp", "transformer", "both"])
    ap.add_argument("--repeat", type=int, default=1, help="interleaved repeats (median taken)")
    ap.add_argument("--seeds", type=int, help="replicas (default: the workload's)")
    ap.add_argument("--steps", type=int, help="steps per run (default: the workload's)")
    ap.add_argument(
        "--threads",
        default=f"1,{os.cpu_count() or 1}",
        help="torch thread counts tried for serial and vmap (the best is kept)",
    )
    ap.add_argument("--compare-src", help="also time the vmap executor of another checkout's src/")
    args = ap.parse_args()
    names = ["mlp", "transformer"] if args.workload == "both" else [args.workload]
    out = {}
    for w in names:
        prefix = "" if w == "mlp" else "transformer_"
        out.update({prefix + k: v for k, v in bench(w, args).items()})
    out["load_average"] = f"{os.getloadavg()[0]:.1f}"
    print(" ".join(f"{k}={v}" for k, v in out.items()))


if __name__ == "__main__":
    main()
