"""Train one ``RunSpec``: build, evaluate on a schedule, checkpoint, resume, write to the store.

``run_spec`` is the single entry point. A spec whose id is ``done`` in the store is not run again;
one left ``running``/``failed``/``interrupted`` resumes from its last checkpoint and, because the
checkpoint holds the model, optimiser, scheduler, batch order and RNG states, ends with the same
metrics as an uninterrupted run. A non-finite loss marks the run ``diverged`` with its step.

One process trains a run id at a time: ``run_spec`` holds the run's lease (``genlab.engine.lease``)
and, if another live process holds it, raises ``RunBusy`` or, with ``wait=True``, waits for it
(and then returns its result). A damaged checkpoint falls back to the previous one
(``genlab.engine.checkpoint``); ``restart=True`` discards the checkpoints and metrics and trains
from step 0. The torch thread count comes from ``genlab.engine.threads`` and is recorded in the
run's summary.
"""

from __future__ import annotations

import math
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
from torch import nn

from genlab.data import TaskData
from genlab.engine import checkpoint, contracts
from genlab.engine import threads as threads_mod
from genlab.engine.batches import BatchSampler
from genlab.engine.lease import hold
from genlab.engine.optim import build_optimizer, build_scheduler
from genlab.engine.progress import RunProgress
from genlab.engine.schedule import eval_steps
from genlab.engine.seeding import seed_everything
from genlab.errors import GenlabError, SpecError
from genlab.methods import METHODS, Method
from genlab.models import MODELS
from genlab.probes import PROBES, EvalContext
from genlab.spec import RunSpec
from genlab.store import Store
from genlab.store_context import using_store
from genlab.tasks import TASKS

Metrics = dict[tuple[str, str], float]
DTYPES = {"float32": torch.float32, "float64": torch.float64}
FINISHED = ("done", "diverged")


@dataclass
class RunResult:
    """What ``run_spec`` returns: the run's final state and its last evaluation."""

    run_id: str
    status: str
    step: int
    wall_s: float
    final: dict[str, float] = field(default_factory=dict)
    resumed_from: int | None = None
    skipped: bool = False
    threads: int | None = None


@dataclass
class Prepared:
    """A spec built into live components, before any training."""

    spec: RunSpec
    data: TaskData
    model: nn.Module
    method: Method
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LambdaLR
    sampler: BatchSampler
    probes: list[tuple[Callable, object]]


def prepare(spec: RunSpec) -> Prepared:
    """Build data (from ``data_seed``), model and batch order (from ``seed``), method, optimiser."""
    dtype = DTYPES[spec.dtype]
    task = TASKS.get(spec.task.name)
    try:
        data = task.obj(task.params.model_validate(spec.task.params), spec.data_seed).to(dtype)
    except ValueError as exc:
        raise SpecError(f"task {spec.task.name!r}: {exc}") from None
    gen = seed_everything(spec.seed)
    entry = MODELS.get(spec.model.name)
    meth = METHODS.get(spec.method.name)
    try:
        model = entry.obj(entry.params.model_validate(spec.model.params), data.info).to(dtype)
        method = meth.obj(meth.params.model_validate(spec.method.params), data.info)
        method.grad_clip = spec.optimizer.grad_clip
        method.total_steps = spec.steps
        model = method.wrap(model)
    except ValueError as exc:
        raise SpecError(f"model/method: {exc}") from None
    except GenlabError:
        raise
    except Exception as exc:  # noqa: BLE001 - a plugin's constructor may raise anything
        raise SpecError(
            f"model {spec.model.name!r} / method {spec.method.name!r} could not be "
            f"built: {contracts.one_line(exc)} ({contracts.where(exc)})"
        ) from None
    optimizer = build_optimizer(model, spec.optimizer)
    probes = []
    for comp in spec.eval.probes:
        p = PROBES.get(comp.name)
        probes.append((p.obj, p.params.model_validate(comp.params)))
    return Prepared(
        spec,
        data,
        model,
        method,
        optimizer,
        build_scheduler(optimizer, spec.optimizer, spec.steps),
        BatchSampler(data.train, spec.batch_size, gen),
        probes,
    )


def evaluate(prep: Prepared, step: int, logits: dict[str, torch.Tensor] | None = None) -> Metrics:
    """Run the spec's probes; ``logits`` per split, when given, are the model's already computed."""
    ctx = EvalContext(prep.model, prep.data, step, prep.spec, dict(logits or {}))
    out: Metrics = {}
    for fn, params in prep.probes:
        out.update(fn(prep.model, ctx, params))
    return out


def check_stop_rules(spec: RunSpec, metrics: Metrics) -> None:
    """``SpecError`` if a stop rule names a metric the first evaluation does not have."""
    for i, rule in enumerate(spec.stop):
        if (rule.split, rule.metric) not in metrics:
            known = sorted({f"{s}:{m}" for s, m in metrics})
            raise SpecError(
                f"stop.{i}: no metric {rule.metric!r} on split {rule.split!r}; "
                f"available: {', '.join(known)}"
            )


def stop_hit(spec: RunSpec, metrics: Metrics, streaks: list[int]) -> bool:
    """Whether a stop rule has held for its patience (``streaks`` counts, updated in place)."""
    for i, rule in enumerate(spec.stop):
        v = metrics[(rule.split, rule.metric)]
        ok = v >= rule.threshold if rule.mode == "ge" else v <= rule.threshold
        streaks[i] = streaks[i] + 1 if ok else 0
    return any(s >= rule.patience for s, rule in zip(streaks, spec.stop, strict=True))


def metric_rows(step: int, metrics: Metrics) -> list[tuple[int, str, str, float]]:
    """One evaluation as the store's long-format rows ``(step, split, metric, value)``."""
    return [(step, s, m, v) for (s, m), v in metrics.items()]


def finished_result(store: Store, run_id: str) -> RunResult:
    """The ``RunResult`` of a run the store has finished (nothing trained: ``skipped``)."""
    row = store.run(run_id)
    return RunResult(
        run_id,
        row["status"],
        row["step"],
        row["wall_s"],
        row["summary"].get("final", {}),
        skipped=True,
        threads=row["summary"].get("threads"),
    )


# kinds of run trained by a runner of their own, registered by their package (genlab.fed: "fed");
# a runner takes run_spec's arguments, in its order
RUNNERS: dict[str, Callable[..., RunResult]] = {}


def register_runner(kind: str, train: Callable[..., RunResult]) -> None:
    """Train the runs of ``kind`` with ``train`` (see ``RUNNERS``)."""
    RUNNERS[kind] = train


def runner(kind: str) -> Callable[..., RunResult]:
    """The runner of ``kind``; a ``SpecError`` if no package registered one."""
    if kind not in RUNNERS:
        raise SpecError(f"no runner for {kind} runs is registered (genlab.{kind} not loaded)")
    return RUNNERS[kind]


def run_spec(
    spec: RunSpec,
    store: Store,
    progress: bool = True,
    on_eval: Callable[[int, Metrics], None] | None = None,
    *,
    wait: bool = False,
    restart: bool = False,
    threads: int | None = None,
) -> RunResult:
    """Train ``spec`` into ``store`` (or return at once if it is done or diverged there).

    ``wait``: if another live process is training this run id, wait for it instead of raising
    ``RunBusy``. ``restart``: start over from step 0, replacing the run's metrics. ``threads``:
    torch threads (default: ``GENLAB_THREADS`` or ``genlab.engine.threads.choose``).
    """
    run_id = spec.run_id
    threads_mod.requested(threads)  # a bad count is bad input: fail before anything
    if not restart and store.status(run_id) in FINISHED:  # training again gives the same numbers
        return finished_result(store, run_id)
    if spec.fed is not None:  # a federated run: rounds of clients, trained by its kind's runner
        with using_store(store):
            return runner("fed")(spec, store, progress, on_eval, wait, restart, threads)
    with using_store(store):  # components and probes built from other runs read this store
        return _run(spec, store, progress, on_eval, wait, restart, threads)


def _run(
    spec: RunSpec,
    store: Store,
    progress: bool,
    on_eval: Callable[[int, Metrics], None] | None,
    wait: bool,
    restart: bool,
    threads: int | None,
) -> RunResult:
    run_id = spec.run_id
    prep = prepare(spec)
    n_threads = threads_mod.choose(sum(p.numel() for p in prep.model.parameters()), threads)
    with threads_mod.using(n_threads):
        first = None
        with _crash_fails_run(store, spec):  # plugins' contracts: exit 2 before anything is written
            contracts.check_model(
                prep.model, prep.data, spec.model.name, MODELS.get(spec.model.name).obj
            )
            contracts.check_method(
                prep.method, prep.model, prep.data, spec.method.name, spec.batch_size
            )
            if restart or store.status(run_id) is None:  # validates stop rules before writing
                first = evaluate(prep, 0)
        if first is not None:
            check_stop_rules(spec, first)
        with hold(store, run_id, wait=wait):
            status = store.status(run_id)  # another process may have finished it meanwhile
            if not restart and status in FINISHED:
                return finished_result(store, run_id)
            run_dir = store.run_dir(run_id)
            if restart:
                checkpoint.discard(run_dir / checkpoint.RESUME)
            state = checkpoint.load(run_dir / checkpoint.RESUME) if status and not restart else None
            if state is None and first is None:
                with _crash_fails_run(store, spec):
                    first = evaluate(prep, 0)
                check_stop_rules(spec, first)
            store.begin(run_id, spec.canonical_json())
            with recorded(store, run_id):
                result = _train(
                    prep,
                    store,
                    state,
                    first if state is None else None,
                    progress,
                    on_eval,
                    n_threads,
                )
    result.threads = n_threads
    return result


@contextmanager
def _crash_fails_run(store: Store, spec: RunSpec) -> Iterator[None]:
    """A component crashing before training (a model's forward in the step-0 evaluation) records
    the run ``failed`` and names the line that raised, as a crash during training does; genlab's
    own errors (bad input) pass through with nothing written."""
    try:
        yield
    except GenlabError:
        raise
    except Exception:
        store.begin(spec.run_id, spec.canonical_json())
        with recorded(store, spec.run_id):
            raise


@contextmanager
def recorded(store: Store, run_id: str, unit: str = "step") -> Iterator[None]:
    """Record how a started run ends early: ``interrupted`` on Ctrl-C, ``failed`` with its
    traceback on an error, which is re-raised as a ``GenlabError`` naming the run and the last
    ``unit`` (a step, or a federated round)."""
    try:
        yield
    except KeyboardInterrupt:
        _record_end(store, run_id, "interrupted")
        raise
    except Exception as exc:
        at = _record_end(store, run_id, "failed", traceback.format_exc())
        if isinstance(exc, GenlabError):
            raise
        place = contracts.where(exc)
        raise GenlabError(
            f"run {run_id} failed at {unit} {at}: {contracts.one_line(exc)}"
            + (f" ({place})" if place else "")
        ) from exc


def _record_end(store: Store, run_id: str, status: str, error: str | None = None) -> int:
    """Mark a run that stopped early; returns its last step. A store that cannot be written (a
    full disk) leaves the run to read ``interrupted`` once this process ends."""
    try:
        row = store.run(run_id)
        store.finish(run_id, status, row["step"], row["wall_s"], error=error)
        return int(row["step"])
    except GenlabError:
        return -1


def _train(
    prep: Prepared,
    store: Store,
    state: dict | None,
    first: Metrics | None,
    progress: bool,
    on_eval: Callable[[int, Metrics], None] | None,
    n_threads: int,
) -> RunResult:
    spec, model = prep.spec, prep.model
    run_id, run_dir = spec.run_id, store.run_dir(spec.run_id)
    at = eval_steps(spec.steps, spec.eval.every, spec.eval.log_points) | prep.method.eval_points()
    streaks = [0] * len(spec.stop)
    start, wall0, resumed_from = 0, 0.0, None
    logs_sum: dict[str, float] = {}
    n_logs = 0
    if state is not None:
        model.load_state_dict(state["model"])
        prep.optimizer.load_state_dict(state["optimizer"])
        prep.scheduler.load_state_dict(state["scheduler"])
        prep.sampler.load_state_dict(state["sampler"])
        torch.set_rng_state(state["rng"])
        prep.method.load_state_dict(state.get("method", {}))
        start, wall0, streaks = state["step"], state["wall_s"], list(state["streaks"])
        logs_sum, n_logs = dict(state["logs_sum"]), state["n_logs"]
        resumed_from = start
        store.drop_metrics_after(run_id, start)
    else:
        store.drop_metrics_after(run_id, -1)
        store.log_metrics(run_id, metric_rows(0, first or {}))
    last: Metrics = first or {}
    t0 = time.perf_counter()
    step, status, error = start, "done", None
    model.train()
    with RunProgress(
        f"{spec.task.name} · {spec.model.name}", spec.steps, start, progress, run_id=run_id
    ) as bar:
        if first:
            bar.show(first)
        for step in range(start + 1, spec.steps + 1):
            logs = prep.method.step(model, prep.optimizer, prep.sampler.next())
            prep.scheduler.step()
            if not math.isfinite(logs["loss"]):
                status, error = "diverged", f"non-finite loss {logs['loss']} at step {step}"
                break
            for k, v in logs.items():
                logs_sum[k] = logs_sum.get(k, 0.0) + v
            n_logs += 1
            if step in at:
                last = evaluate(prep, step)
                last.update({("optim", k): v / n_logs for k, v in logs_sum.items()})
                last[("optim", "lr")] = prep.scheduler.get_last_lr()[0]
                logs_sum, n_logs = {}, 0
                store.log_metrics(run_id, metric_rows(step, last))
                bar.show(last)
                if on_eval is not None:
                    on_eval(step, last)
                if spec.stop and stop_hit(spec, last, streaks):
                    break
            if step % spec.checkpoint_every == 0 and step < spec.steps:
                wall = wall0 + time.perf_counter() - t0
                checkpoint.save(
                    run_dir / checkpoint.RESUME,
                    {
                        "model": model.state_dict(),
                        "optimizer": prep.optimizer.state_dict(),
                        "scheduler": prep.scheduler.state_dict(),
                        "sampler": prep.sampler.state_dict(),
                        "rng": torch.get_rng_state(),
                        "step": step,
                        "wall_s": wall,
                        "streaks": streaks,
                        "logs_sum": logs_sum,
                        "n_logs": n_logs,
                        "method": prep.method.state_dict(),
                    },
                )
                store.progress(run_id, step, wall)
            if step % 25 == 0:
                bar.advance(step)
        bar.advance(step)
    wall = wall0 + time.perf_counter() - t0
    final = {f"{s}:{m}": v for (s, m), v in last.items()}
    summary = {
        "final": final,
        "steps": step,
        "stopped_early": step < spec.steps and not error,
        "threads": n_threads,
    }
    if status == "done":
        checkpoint.save(run_dir / checkpoint.FINAL, {"model": model.state_dict()}, False)
        checkpoint.discard(run_dir / checkpoint.RESUME)
    store.finish(run_id, status, step, wall, error=error, summary=summary)
    return RunResult(run_id, status, step, wall, final, resumed_from)
