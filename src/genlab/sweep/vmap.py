"""The vmap executor: runs that differ only in numbers trained as one stacked model.

Specs are grouped when they differ only in ``seed``, ``data_seed``, ``optimizer.lr``,
``optimizer.weight_decay``, numbers in ``task.params`` (``train_fraction``, ``label_noise``, ...)
and real numbers in ``model.params`` (init scales); a group is then cut by shape (another ``p``
gives another vocabulary). Each replica is built exactly as ``genlab.engine.prepare`` builds it
alone, trained with the others by ``genlab.sweep.stacked.Stacked`` (one vmapped loss and gradient
over flat parameters) and ``VecOptimizer``, evaluated with its own probes on the engine's
schedule (the logits of all replicas from one vmapped forward where that is faster), and written
to the store as its own run, with the metrics ``run_spec`` gives for that spec alone (within float
tolerance). With ``workers`` > 1, parts of the groups train in that many processes.

The inner loop is a few tensor operations per step for the whole group: losses are buffered and
read at evaluation and checkpoint steps (divergence is found there, at its own step), metrics are
written every few seconds, at checkpoints and at the end. Replicas that stop (a stop rule, a
divergence) leave the stack. Checkpoints use the engine's format, so a killed group resumes here
or under ``run_spec``. What cannot be stacked (BatchNorm, dropout, ``grad_clip``, a method that
overrides ``step``, logs extra values or draws random numbers) is retried in narrower groups, then
falls back to the serial executor with a message; so is a part whose stacked step is measured
slower than its replicas' steps one by one (compute-bound models such as the d = 128 transformer).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import sys
import time
import traceback
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed

import torch

from genlab.engine import checkpoint
from genlab.engine.progress import RunProgress
from genlab.engine.schedule import eval_steps
from genlab.engine.train import Prepared, check_stop_rules, evaluate, metric_rows, prepare, stop_hit
from genlab.errors import GenlabError, SpecError
from genlab.spec import RunSpec
from genlab.store import RunBusy, Store
from genlab.store_context import using_store
from genlab.sweep import autocompile
from genlab.sweep.base import Outcome, pending
from genlab.sweep.pool import threads_per_worker
from genlab.sweep.serial import serial
from genlab.sweep.stacked import NotStackable, Stacked
from genlab.sweep.vec_optim import VecOptimizer

SPEED_CHECK = True  # time a stacked step against single ones; train serially when slower
COMPILE = os.environ.get("GENLAB_VMAP_COMPILE") == "1"  # try torch.compile (see autocompile)
FLUSH_S = 2.0  # write buffered metrics at least this often (and at checkpoints and the end)
LOSS_BUFFER = 256  # steps of losses held before they are read


def _is_number(v: object, ints: bool) -> bool:
    return isinstance(v, float) or (ints and isinstance(v, int) and not isinstance(v, bool))


def group_key(spec: RunSpec, broad: bool = True) -> str:
    """The spec without what may differ inside a stacked group. ``broad=False``: only seeds, lr
    and weight decay may differ (the fallback when a broad group does not stack)."""
    d = spec.model_dump(mode="json")
    for k in ("seed", "data_seed"):
        d.pop(k)
    d["optimizer"].pop("lr")
    d["optimizer"].pop("weight_decay")
    if broad:
        for part, ints in (("task", True), ("model", False)):
            d[part]["params"] = {
                k: v for k, v in d[part]["params"].items() if not _is_number(v, ints)
            }
    return json.dumps(d, sort_keys=True)


def stack_groups(specs: Sequence[RunSpec], max_group: int = 64) -> list[list[RunSpec]]:
    """Specs grouped by ``group_key`` (order kept), groups cut at ``max_group`` replicas."""
    by: dict[str, list[RunSpec]] = {}
    for s in specs:
        by.setdefault(group_key(s), []).append(s)
    return [g[i : i + max_group] for g in by.values() for i in range(0, len(g), max_group)]


def _split_by(items: list, key) -> list[list]:
    by: dict = {}
    for it in items:
        by.setdefault(key(it), []).append(it)
    return list(by.values())


def _shape_key(prep: Prepared) -> str:
    params = [(n, tuple(t.shape)) for n, t in prep.model.named_parameters()]
    data = [(k, tuple(s.x.shape[1:]), tuple(s.y.shape[1:])) for k, s in prep.data.train.items()]
    return repr((params, data))


def _data_key(spec: RunSpec) -> str:
    return json.dumps([spec.task.model_dump(mode="json"), spec.data_seed], sort_keys=True)


def _optim_state(prep: Prepared, states: list[dict[str, torch.Tensor]]) -> dict:
    """Replica state in ``torch.optim``'s state-dict format."""
    opt = prep.optimizer
    opt.state.clear()
    for p, st in zip(opt.param_groups[0]["params"], states, strict=True):
        if st:
            opt.state[p] = st
    return opt.state_dict()


def _sync_schedule(prep: Prepared, step: int) -> None:
    """Bring the replica's scheduler (and its optimiser's lr) to ``step`` completed steps."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*lr_scheduler.step.*")
        prep.scheduler.last_epoch = step - 1
        prep.scheduler.step()


class _Replica:
    """One run of the group: its bookkeeping between evaluations, and its unwritten metrics."""

    def __init__(self, prep: Prepared, state: dict | None, first: dict | None, rng) -> None:
        self.prep, self.rid = prep, prep.spec.run_id
        self.streaks = [0] * len(prep.spec.stop)
        self.logs_sum, self.n_logs, self.wall, self.rng = 0.0, 0, 0.0, rng
        self.last = first or {}
        self.rows = metric_rows(0, first) if first else []
        self.resumed = state is not None
        if state is not None:
            self.wall, self.streaks = state["wall_s"], list(state["streaks"])
            self.logs_sum, self.n_logs = state["logs_sum"].get("loss", 0.0), state["n_logs"]
            self.rng = state["rng"]


def train_group(specs: list[RunSpec], store: Store, progress: bool) -> list[Outcome]:
    """Train one group (see ``stack_groups``): cut by shape and start step, stack each part, and
    train what does not stack serially. A part writes nothing before it is known to stack."""
    parts = []
    for spec in specs:
        prep = prepare(spec)
        rng = torch.get_rng_state()
        state = None
        if store.status(spec.run_id):
            state = checkpoint.load(store.run_dir(spec.run_id) / checkpoint.RESUME)
        parts.append((prep, state, rng))
    outcomes: list[Outcome] = []
    for part in _split_by(parts, lambda t: (_shape_key(t[0]), (t[1] or {}).get("step", 0))):
        outcomes += _train_part(part, store, progress)
    return outcomes


def _train_part(part: list, store: Store, progress: bool, broad: bool = True) -> list[Outcome]:
    specs = [p.spec for p, _, _ in part]
    if len(part) == 1:
        return serial(specs, store, progress)
    for prep, state, _ in part:
        if state is not None:
            prep.model.load_state_dict(state["model"])
            prep.optimizer.load_state_dict(state["optimizer"])
            prep.scheduler.load_state_dict(state["scheduler"])
            prep.sampler.load_state_dict(state["sampler"])
    try:
        stacked = Stacked([p for p, _, _ in part], len({_data_key(s) for s in specs}) == 1)
        gain = stacked.speedup() if SPEED_CHECK else float("inf")
    except NotStackable as exc:
        narrow = _split_by(part, lambda t: group_key(t[0].spec, broad=False))
        if broad and len(narrow) > 1:
            return [o for sub in narrow for o in _train_part(sub, store, progress, broad=False)]
        print(
            f"vmap: {len(specs)} runs cannot be stacked ({exc}); training them serially",
            file=sys.stderr,
            flush=True,
        )
        return serial(specs, store, progress)
    if gain < 1:
        print(
            f"vmap: a stacked step of {len(specs)} runs is slower than theirs one by one "
            f"({gain:.2f}x); training them serially",
            file=sys.stderr,
            flush=True,
        )
        return serial(specs, store, progress)
    firsts = [None] * len(part)
    if any(state is None for _, state, _ in part):
        logits = stacked.eval_logits()
        for i, (prep, state, _) in enumerate(part):
            if state is None:
                firsts[i] = evaluate(prep, 0, logits[i])
                check_stop_rules(prep.spec, firsts[i])
    begun: list[int] = []
    busy: list[Outcome] = []
    for i, spec in enumerate(specs):
        try:
            store.begin(spec.run_id, spec.canonical_json())
            begun.append(i)
        except RunBusy as exc:  # another live process took it after ``pending`` looked
            busy.append(Outcome(spec.run_id, "busy", str(exc)))
    if busy:  # stack what this process holds; the rest is the other process's
        for i in begun:
            store.release(specs[i].run_id)
        keep = [part[i] for i in begun]
        return busy + (_train_part(keep, store, progress, broad) if keep else [])
    reps = [_Replica(p, st, f, rng) for (p, st, rng), f in zip(part, firsts, strict=True)]
    try:
        return _Loop(stacked, reps, [st for _, st, _ in part], store, progress).run()
    except KeyboardInterrupt:
        _mark(store, specs, "interrupted")
        raise
    except Exception as exc:
        _mark(store, specs, "failed", traceback.format_exc())
        return [
            Outcome(s.run_id, store.status(s.run_id) or "failed", f"vmap group: {exc!r}")
            for s in specs
        ]


def _mark(store: Store, specs: list[RunSpec], status: str, error: str | None = None) -> None:
    for spec in specs:
        if store.status(spec.run_id) == "running":
            row = store.run(spec.run_id)
            store.finish(spec.run_id, status, row["step"], row["wall_s"], error=error)


class _Loop:
    """The training loop of one stacked part, from its common start step to the end."""

    def __init__(
        self, stacked: Stacked, reps: list[_Replica], states: list, store: Store, progress: bool
    ) -> None:
        self.st, self.reps, self.store, self.progress = stacked, reps, store, progress
        self.live = list(range(len(reps)))  # the replica of each stacked row
        spec0 = reps[0].prep.spec
        self.spec0 = spec0
        self.start = (states[0] or {}).get("step", 0)
        self.opt = VecOptimizer(spec0.optimizer, stacked.trainable, stacked.slots)
        if self.start:
            torch_states = [
                [
                    r.prep.optimizer.state.get(p, {})
                    for p in r.prep.optimizer.param_groups[0]["params"]
                ]
                for r in reps
            ]
            self.opt.load_replicas(torch_states, self.start, stacked.flat.detach())
        self.base_lr = torch.tensor(
            [[r.prep.scheduler.base_lrs[0]] for r in reps], dtype=torch.float64
        )
        self.wd = torch.tensor(
            [[r.prep.spec.optimizer.weight_decay] for r in reps], dtype=torch.float64
        )
        self.lam = reps[0].prep.scheduler.lr_lambdas[0]
        self.outcomes: dict[int, Outcome] = {}
        self.flushed = time.perf_counter()
        if COMPILE and spec0.steps - self.start >= autocompile.MIN_STEPS:
            stacked.trial = autocompile.Autocompile()

    # ---- the loop -----------------------------------------------------------------------------

    def run(self) -> list[Outcome]:
        st, spec0, store = self.st, self.spec0, self.store
        for r in self.reps:
            store.drop_metrics_after(r.rid, self.start if r.resumed else -1)
        at = eval_steps(spec0.steps, spec0.eval.every, spec0.eval.log_points)
        every = spec0.checkpoint_every
        buf = st.flat.new_empty(LOSS_BUFFER, len(self.live))
        n, factor, lr = 0, None, self.base_lr
        self.tick = time.perf_counter()
        title = f"vmap x{len(self.reps)} · {spec0.task.name} · {spec0.model.name}"
        step = self.start
        with RunProgress(title, spec0.steps, self.start, self.progress) as bar:
            for step in range(self.start + 1, spec0.steps + 1):
                f = self.lam(step - 1)  # LambdaLR: step s trains at base * lambda(s - 1)
                if f != factor:
                    factor, lr = f, self.base_lr * f
                losses, g = st.grads()
                with torch.no_grad():
                    self.opt.update(st.flat, g, lr, self.wd)
                buf[n] = losses
                n += 1
                evals, ckpt = step in at, step % every == 0 and step < spec0.steps
                if evals or ckpt or n == LOSS_BUFFER or step == spec0.steps:
                    rows = self._absorb(buf[:n], step)
                    n = 0
                    if evals:
                        self._evaluate(step, rows)
                    if not self.live:
                        break
                    if len(self.live) < len(rows):
                        self._compact(rows)
                        buf = buf.new_empty(LOSS_BUFFER, len(self.live))
                        lr, factor = self.base_lr, None
                    if ckpt:
                        self._checkpoint(step)
                    elif time.perf_counter() - self.flushed > FLUSH_S:
                        self._write()
                if step % 25 == 0:
                    bar.advance(step)
            bar.advance(step)
        for j, i in enumerate(list(self.live)):  # the stack holds exactly the live replicas
            self._finish(i, j, "done", step)
        return [self.outcomes[i] for i in range(len(self.reps))]

    def _time(self) -> None:
        now = time.perf_counter()
        for i in self.live:  # the group's time, shared among the replicas still training
            self.reps[i].wall += (now - self.tick) / len(self.live)
        self.tick = now

    def _absorb(self, losses: torch.Tensor, step: int) -> list[int]:
        """Add the buffered losses (steps ``step - len + 1 .. step``); finish the replicas whose
        loss went non-finite, at that step. Returns the live replicas before this point."""
        self._time()
        rows = list(self.live)
        sums = losses.double().sum(0).tolist()
        bad = (~torch.isfinite(losses)).any(0).tolist()
        for j, i in enumerate(rows):
            r = self.reps[i]
            if bad[j]:
                col = losses[:, j]
                first = int((~torch.isfinite(col)).nonzero()[0])
                s = step - len(losses) + 1 + first
                self._finish(
                    i, j, "diverged", s, f"non-finite loss {col[first].item()} at step {s}"
                )
            else:
                r.logs_sum += sums[j]
                r.n_logs += len(losses)
        return rows

    def _evaluate(self, step: int, rows: list[int]) -> None:
        logits = self.st.eval_logits()
        for j, i in enumerate(rows):
            if i not in self.live:
                continue
            r = self.reps[i]
            self.st.load_into(j)
            m = evaluate(r.prep, step, logits[j])
            m[("optim", "loss")] = r.logs_sum / r.n_logs
            m[("optim", "lr")] = r.prep.scheduler.base_lrs[0] * self.lam(step)
            r.last, r.logs_sum, r.n_logs = m, 0.0, 0
            r.rows += metric_rows(step, m)
            if r.prep.spec.stop and stop_hit(r.prep.spec, m, r.streaks):
                self._finish(i, j, "done", step)

    def _checkpoint(self, step: int) -> None:
        self._write()
        for j, i in enumerate(self.live):
            r = self.reps[i]
            model = self.st.load_into(j)
            _sync_schedule(r.prep, step)
            checkpoint.save(
                self.store.run_dir(r.rid) / checkpoint.RESUME,
                {
                    "model": model.state_dict(),
                    "optimizer": _optim_state(r.prep, self.opt.replica_state(j)),
                    "scheduler": r.prep.scheduler.state_dict(),
                    "sampler": r.prep.sampler.state_dict(),
                    "rng": r.rng,
                    "step": step,
                    "wall_s": r.wall,
                    "streaks": r.streaks,
                    "logs_sum": {"loss": r.logs_sum} if r.n_logs else {},
                    "n_logs": r.n_logs,
                },
            )
            self.store.progress(r.rid, step, r.wall)

    def _write(self) -> None:
        for r in self.reps:
            if r.rows:
                self.store.log_metrics(r.rid, r.rows)
                r.rows = []
        self.flushed = time.perf_counter()

    def _finish(self, i: int, j: int, status: str, step: int, error: str | None = None) -> None:
        """End replica ``i`` (stacked row ``j``); it leaves the stack at the next compaction."""
        r, store = self.reps[i], self.store
        self._time()
        if r.rows:
            store.log_metrics(r.rid, r.rows)
            r.rows = []
        final = {f"{s}:{m}": v for (s, m), v in r.last.items()}
        summary = {
            "final": final,
            "steps": step,
            "stopped_early": step < r.prep.spec.steps and not error,
        }
        run_dir = store.run_dir(r.rid)
        if status == "done":
            checkpoint.save(
                run_dir / checkpoint.FINAL, {"model": self.st.load_into(j).state_dict()}
            )
            checkpoint.discard(run_dir / checkpoint.RESUME)
        store.finish(r.rid, status, step, r.wall, error=error, summary=summary)
        self.outcomes[i] = Outcome(r.rid, status, error)
        self.live.remove(i)

    def _compact(self, rows: list[int]) -> None:
        keep = [j for j, i in enumerate(rows) if i in self.live]
        idx = torch.tensor(keep)
        self.st.keep(keep)
        self.opt.keep(idx)
        self.base_lr, self.wd = self.base_lr[idx], self.wd[idx]


MIN_CHUNK = 4  # a group is split across worker processes only into parts of at least this many


def chunks(groups: list[list[RunSpec]], workers: int) -> list[list[RunSpec]]:
    """Cut each group into at most ``workers`` near-equal parts of >= ``MIN_CHUNK`` replicas.

    Intra-op threads speed up a stacked step of small models less than processes do (16 grokking
    MLPs on 2 cores: 2.71 s with 2 threads, 2.19 s with 2 processes), so the cores are used as
    processes, each training a part of the group.
    """
    out = []
    for g in groups:
        n = max(1, min(workers, len(g) // MIN_CHUNK))
        size, extra = divmod(len(g), n)
        start = 0
        for i in range(n):
            end = start + size + (i < extra)
            out.append(g[start:end])
            start = end
    return out


def _run(group: list[RunSpec], store: Store, progress: bool) -> list[Outcome]:
    if len(group) == 1:
        return serial(group, store, progress)
    try:
        with using_store(store):  # specs built from other runs (from_run, useful) read this store
            return train_group(group, store, progress)
    except GenlabError as exc:
        return [Outcome(s.run_id, store.status(s.run_id) or "failed", str(exc)) for s in group]


_STORE: Store | None = None


def _init(root: str, threads: int) -> None:
    global _STORE
    torch.set_num_threads(threads)
    _STORE = Store(root)


def _work(spec_jsons: list[str]) -> list[tuple[str, str, str | None]]:
    from genlab.spec import parse_spec

    assert _STORE is not None
    group = [parse_spec(json.loads(s)) for s in spec_jsons]
    return [(o.run_id, o.status, o.error) for o in _run(group, _STORE, False)]


def vmap_executor(max_group: int = 64, workers: int = 1):
    """An executor that stacks compatible specs (see the module docstring); others run serially.
    With ``workers`` > 1, groups are cut into parts (``chunks``) trained by that many forked
    processes, one torch thread each (cores // workers)."""
    if workers < 1:
        raise SpecError(f"workers must be >= 1, got {workers}")

    def execute(specs: Sequence[RunSpec], store: Store, progress: bool = True) -> list[Outcome]:
        todo, outcomes = pending(specs, store)
        posthoc = [s for s in todo if s.steps == 0]  # nothing to stack: evaluated once each
        if posthoc:
            outcomes += serial(posthoc, store, progress)
            todo = [s for s in todo if s.steps]
        parts = chunks(stack_groups(todo, max_group), workers)
        if workers == 1 or len(parts) <= 1:
            for part in parts:
                outcomes += _run(part, store, progress)
            return outcomes
        n = min(workers, len(parts))
        ctx = mp.get_context("fork" if sys.platform == "linux" else "spawn")
        with ProcessPoolExecutor(
            n, mp_context=ctx, initializer=_init, initargs=(str(store.root), threads_per_worker(n))
        ) as ex:
            futures = [ex.submit(_work, [s.canonical_json() for s in part]) for part in parts]
            for i, fut in enumerate(as_completed(futures), 1):
                done = [Outcome(*o) for o in fut.result()]
                outcomes += done
                if progress:
                    print(
                        f"[{i}/{len(parts)}] vmap part of {len(done)} runs: "
                        f"{', '.join(sorted({o.status for o in done}))}",
                        file=sys.stderr,
                        flush=True,
                    )
        return outcomes

    execute.__name__ = "vmap" if workers == 1 else f"vmap({workers})"
    return execute
