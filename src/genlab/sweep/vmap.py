"""The vmap executor: K runs that differ only in ``seed``, ``data_seed``, ``optimizer.lr`` or
``optimizer.weight_decay`` trained as one stacked model with ``torch.func``.

Each replica is built exactly as ``genlab.engine.prepare`` builds it alone (``seed_everything(seed)``
then the model, its own ``BatchSampler``), the stacked parameters are trained with
``vmap(grad(loss))`` over ``functional_call`` and a vectorised optimiser (``vec_optim``), and every
replica is evaluated with the run's own probes on the engine's schedule and written to the store as
its own run, with the metrics ``run_spec`` gives for that spec alone (within float tolerance).
Checkpoints use the engine's format, so a killed group resumes here or under ``run_spec``.

Models that cannot be stacked (BatchNorm statistics, dropout, ``grad_clip``, a method that overrides
``step`` or draws random numbers in its loss) fall back to the serial executor with a message.
"""

from __future__ import annotations

import copy
import json
import math
import sys
import time
import traceback
import warnings
from collections.abc import Sequence

import torch
from torch import Tensor, nn
from torch.func import functional_call, grad, vmap

from genlab.engine import checkpoint
from genlab.engine.progress import RunProgress
from genlab.engine.schedule import eval_steps
from genlab.engine.train import Prepared, _check_stop_rules, _rows, _stop_hit, evaluate, prepare
from genlab.errors import GenlabError
from genlab.methods.base import Method
from genlab.spec import RunSpec
from genlab.store import Store
from genlab.sweep.base import Outcome, pending
from genlab.sweep.serial import serial
from genlab.sweep.vec_optim import VecOptimizer

VARYING = ("seed", "data_seed", "lr", "weight_decay")  # what may differ inside one stacked group


class NotStackable(Exception):
    """The group cannot be trained as one stacked model; the message says why."""


def group_key(spec: RunSpec) -> str:
    """The spec without seeds, lr and weight decay: specs with equal keys can be stacked."""
    d = spec.model_dump(mode="json")
    d.pop("seed")
    d.pop("data_seed")
    d["optimizer"].pop("lr")
    d["optimizer"].pop("weight_decay")
    return json.dumps(d, sort_keys=True)


def stack_groups(specs: Sequence[RunSpec], max_group: int = 64) -> list[list[RunSpec]]:
    """Specs grouped by ``group_key`` (order kept), groups cut at ``max_group`` replicas."""
    by: dict[str, list[RunSpec]] = {}
    for s in specs:
        by.setdefault(group_key(s), []).append(s)
    return [g[i : i + max_group] for g in by.values() for i in range(0, len(g), max_group)]


def unstackable_reason(spec: RunSpec, prep: Prepared) -> str | None:
    """Why this spec's model cannot be stacked, or None."""
    if spec.optimizer.grad_clip is not None:
        return "optimizer.grad_clip is set (clipping is per model)"
    if type(prep.method).step is not Method.step:
        return f"method {spec.method.name!r} overrides step()"
    if any(s.stream is not None for s in prep.data.train.values()):
        return "the task streams fresh batches (their shapes differ between replicas)"
    for name, mod in prep.model.named_modules():
        if isinstance(mod, nn.modules.batchnorm._BatchNorm):
            return f"module {name or 'model'} is BatchNorm (running statistics per model)"
        p = mod.p if isinstance(mod, nn.modules.dropout._DropoutNd) else getattr(mod, "dropout", 0)
        if isinstance(p, float) and p > 0:
            return f"module {name or 'model'} uses dropout (random masks per model)"
    return None


def _tiny(splits: dict) -> dict[str, tuple[Tensor, Tensor]]:
    return {k: (s.x[:4], s.y[:4]) for k, s in splits.items()}


class _Group:
    """The stacked state of K replicas and the vmapped gradient function."""

    def __init__(self, preps: list[Prepared]) -> None:
        self.preps = preps
        base = copy.deepcopy(preps[0].model)
        self.base = base.train()
        self.method = preps[0].method
        named = [dict(p.model.named_parameters()) for p in preps]
        self.names = [n for n, t in named[0].items() if t.requires_grad]
        self.params = {n: torch.stack([d[n].detach() for d in named]).clone() for n in self.names}
        bufs = [dict(p.model.named_buffers()) for p in preps]
        frozen = [n for n, t in named[0].items() if not t.requires_grad]
        self.consts = {n: torch.stack([d[n].detach() for d in named]) for n in frozen}
        self.consts.update({n: torch.stack([d[n] for d in bufs]) for n in bufs[0]})
        for p in preps[1:]:
            for k, sp in p.data.train.items():
                ref = preps[0].data.train.get(k)
                if ref is None or ref.x.shape != sp.x.shape or ref.y.shape != sp.y.shape:
                    raise NotStackable(f"training split {k!r} differs in shape between data seeds")
        full = [preps[0].spec.batch_size is None or preps[0].spec.batch_size >= len(s)
                for s in preps[0].data.train.values()]  # fmt: skip
        self.full_batch = all(full)
        self.same_data = len({p.spec.data_seed for p in preps}) == 1
        self._stacked = None  # full batch over several data seeds: the stacked splits, built once
        shared = self.full_batch and self.same_data

        def loss(params: dict[str, Tensor], consts: dict[str, Tensor], batches: dict
                 ) -> tuple[Tensor, Tensor]:  # fmt: skip
            def fmodel(x: Tensor) -> Tensor:
                return functional_call(self.base, {**consts, **params}, (x,))

            value, logs = self.method.loss(fmodel, batches)
            if logs:
                raise NotStackable(f"method {type(self.method).__name__} logs extra values")
            return value, value.detach()

        self.grad_fn = vmap(grad(loss, has_aux=True), in_dims=(0, 0, None if shared else 0))
        self.unused: set[str] = set()

    def batches(self) -> dict[str, tuple[Tensor, Tensor]]:
        if self.full_batch and self._stacked is not None:
            return self._stacked
        draws = [p.sampler.next() for p in self.preps]
        if self.full_batch and self.same_data:
            return draws[0]
        stacked = {k: (torch.stack([d[k][0] for d in draws]), torch.stack([d[k][1] for d in draws]))
                   for k in draws[0]}  # fmt: skip
        if self.full_batch:
            self._stacked = stacked
        return stacked

    def dry_run(self) -> None:
        """Check on a few examples that vmapped gradients equal autograd on replica 0."""
        prep = self.preps[0]
        tiny = _tiny(prep.data.train)
        model, method = copy.deepcopy(prep.model).train(), copy.deepcopy(prep.method)
        value, _ = method.loss(model, tiny)
        value.backward()
        ref = dict(model.named_parameters())
        self.unused = {n for n in self.names if ref[n].grad is None}
        batches = tiny if self.full_batch and self.same_data else {
            k: (x.expand(len(self.preps), *x.shape), y.expand(len(self.preps), *y.shape))
            for k, (x, y) in tiny.items()}  # fmt: skip
        try:
            grads, _ = self.grad_fn(self.params, self.consts, batches)
        except NotStackable:
            raise
        except Exception as exc:  # torch.func refuses the model or the loss
            raise NotStackable(f"torch.func cannot vmap this model/method: {exc}") from None
        for n in self.names:
            if n in self.unused:
                continue
            if not torch.allclose(grads[n][0], ref[n].grad, rtol=1e-3, atol=1e-6):
                raise NotStackable(f"vmapped gradient of {n} differs from autograd")

    def load_into(self, k: int) -> nn.Module:
        """Copy replica ``k``'s parameters into its own module (for probes and checkpoints)."""
        model = self.preps[k].model
        with torch.no_grad():
            for n, t in model.named_parameters():
                if n in self.params:
                    t.copy_(self.params[n][k])
        return model


def _optim_state(prep: Prepared, states: list[dict[str, Tensor]]) -> dict:
    """Replica state in ``torch.optim``'s state-dict format."""
    opt = prep.optimizer
    opt.state.clear()
    for p, st in zip(opt.param_groups[0]["params"], states, strict=True):
        if st:
            opt.state[p] = st
    return opt.state_dict()


def train_group(specs: list[RunSpec], store: Store, progress: bool) -> list[Outcome]:
    """Train one stackable group (all at the same start step). Raises NotStackable before writing."""
    preps, rngs, states = [], [], []
    for spec in specs:
        preps.append(prepare(spec))
        rngs.append(torch.get_rng_state())
        status = store.status(spec.run_id)
        states.append(checkpoint.load(store.run_dir(spec.run_id) / checkpoint.RESUME)
                      if status else None)  # fmt: skip
    starts = {(s or {}).get("step", 0) for s in states}
    if len(starts) > 1:
        by: dict[int, list[RunSpec]] = {}
        for spec, st in zip(specs, states, strict=True):
            by.setdefault((st or {}).get("step", 0), []).append(spec)
        return [o for g in by.values() for o in train_group(g, store, progress)]
    for spec, prep in zip(specs, preps, strict=True):
        reason = unstackable_reason(spec, prep)
        if reason:
            raise NotStackable(reason)
    firsts: list[dict | None] = []
    for prep, st in zip(preps, states, strict=True):
        if st is None:
            first = evaluate(prep, 0)
            _check_stop_rules(prep.spec, first)
            firsts.append(first)
        else:
            prep.model.load_state_dict(st["model"])
            prep.optimizer.load_state_dict(st["optimizer"])
            prep.scheduler.load_state_dict(st["scheduler"])
            prep.sampler.load_state_dict(st["sampler"])
            firsts.append(None)
    group = _Group(preps)
    group.dry_run()
    for spec in specs:
        store.begin(spec.run_id, spec.canonical_json())
    try:
        return _train(group, store, states, firsts, rngs, progress)
    except KeyboardInterrupt:
        for spec in specs:
            if store.status(spec.run_id) == "running":
                row = store.run(spec.run_id)
                store.finish(spec.run_id, "interrupted", row["step"], row["wall_s"])
        raise
    except Exception as exc:
        for spec in specs:
            if store.status(spec.run_id) == "running":
                row = store.run(spec.run_id)
                store.finish(spec.run_id, "failed", row["step"], row["wall_s"],
                             error=traceback.format_exc())  # fmt: skip
        raise GenlabError(f"vmap group of {len(specs)} failed: {exc!r}") from exc


def _train(group: _Group, store: Store, states: list, firsts: list, rngs: list,
           progress: bool) -> list[Outcome]:  # fmt: skip
    preps = group.preps
    spec0 = preps[0].spec
    k_all = len(preps)
    at = eval_steps(spec0.steps, spec0.eval.every, spec0.eval.log_points)
    opt = VecOptimizer(spec0.optimizer, group.names, group.params)
    start = 0
    streaks = [[0] * len(spec0.stop) for _ in preps]
    logs_sum: list[dict[str, float]] = [{} for _ in preps]
    n_logs = [0] * k_all
    wall0 = [0.0] * k_all
    last: list[dict] = [f or {} for f in firsts]
    for i, (prep, st) in enumerate(zip(preps, states, strict=True)):
        rid = prep.spec.run_id
        if st is not None:
            start, wall0[i], streaks[i] = st["step"], st["wall_s"], list(st["streaks"])
            logs_sum[i], n_logs[i], rngs[i] = dict(st["logs_sum"]), st["n_logs"], st["rng"]
            store.drop_metrics_after(rid, start)
        else:
            store.drop_metrics_after(rid, -1)
            store.log_metrics(rid, _rows(0, firsts[i]))
    if start:
        torch_states = [[prep.optimizer.state.get(p, {}) for p in prep.optimizer.param_groups[0]["params"]]
                        for prep in preps]  # fmt: skip
        opt.load_replicas(torch_states, start)
    wd = torch.tensor([p.spec.optimizer.weight_decay for p in preps], dtype=torch.float64)
    active = torch.ones(k_all, dtype=torch.bool)
    outcomes: dict[int, Outcome] = {}
    t0 = time.perf_counter()

    def wall(i: int) -> float:  # the group's time, shared equally among its replicas
        return wall0[i] + (time.perf_counter() - t0) / k_all

    def finish(i: int, status: str, step: int, error: str | None = None) -> None:
        prep = preps[i]
        rid, run_dir = prep.spec.run_id, store.run_dir(prep.spec.run_id)
        final = {f"{s}:{m}": v for (s, m), v in last[i].items()}
        summary = {"final": final, "steps": step,
                   "stopped_early": step < prep.spec.steps and not error}  # fmt: skip
        if status == "done":
            checkpoint.save(run_dir / checkpoint.FINAL, {"model": group.load_into(i).state_dict()})
            (run_dir / checkpoint.RESUME).unlink(missing_ok=True)
        store.finish(rid, status, step, wall(i), error=error, summary=summary)
        outcomes[i] = Outcome(rid, status, error)
        active[i] = False

    title = f"vmap x{k_all} · {spec0.task.name} · {spec0.model.name}"
    step = start
    with RunProgress(title, spec0.steps, start, progress) as bar, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*lr_scheduler.step.*")
        for step in range(start + 1, spec0.steps + 1):
            lr = torch.tensor(
                [p.optimizer.param_groups[0]["lr"] for p in preps], dtype=torch.float64
            )
            grads, losses = group.grad_fn(group.params, group.consts, group.batches())
            for n in group.unused:
                grads.pop(n, None)
            opt.update(group.params, grads, lr, wd, None if bool(active.all()) else active.clone())
            for p in preps:
                p.scheduler.step()
            loss_list = losses.tolist()
            for i in range(k_all):
                if not active[i]:
                    continue
                if not math.isfinite(loss_list[i]):
                    finish(i, "diverged", step, f"non-finite loss {loss_list[i]} at step {step}")
                    continue
                logs_sum[i]["loss"] = logs_sum[i].get("loss", 0.0) + loss_list[i]
                n_logs[i] += 1
                if step in at:
                    prep = preps[i]
                    group.load_into(i)
                    last[i] = evaluate(prep, step)
                    last[i].update({("optim", k): v / n_logs[i] for k, v in logs_sum[i].items()})
                    last[i][("optim", "lr")] = prep.scheduler.get_last_lr()[0]
                    logs_sum[i], n_logs[i] = {}, 0
                    store.log_metrics(prep.spec.run_id, _rows(step, last[i]))
                    if prep.spec.stop and _stop_hit(prep.spec, last[i], streaks[i]):
                        finish(i, "done", step)
                        continue
                if step % spec0.checkpoint_every == 0 and step < spec0.steps:
                    _save_checkpoint(group, i, opt, store, step, wall(i), streaks[i], logs_sum[i],
                                     n_logs[i], rngs[i])  # fmt: skip
            if not bool(active.any()):
                break
            if step % 25 == 0:
                bar.advance(step)
        bar.advance(step)
    for i in range(k_all):
        if active[i]:
            finish(i, "done", step)
    return [outcomes[i] for i in range(k_all)]


def _save_checkpoint(group: _Group, i: int, opt: VecOptimizer, store: Store, step: int,
                     wall_s: float, streaks: list[int], logs_sum: dict, n_logs: int,
                     rng: Tensor) -> None:  # fmt: skip
    prep = group.preps[i]
    model = group.load_into(i)
    checkpoint.save(store.run_dir(prep.spec.run_id) / checkpoint.RESUME, {
        "model": model.state_dict(), "optimizer": _optim_state(prep, opt.replica_state(i)),
        "scheduler": prep.scheduler.state_dict(), "sampler": prep.sampler.state_dict(),
        "rng": rng, "step": step, "wall_s": wall_s, "streaks": streaks,
        "logs_sum": logs_sum, "n_logs": n_logs,
    })  # fmt: skip
    store.progress(prep.spec.run_id, step, wall_s)


def vmap_executor(max_group: int = 64):
    """An executor that stacks compatible specs (see the module docstring); others run serially."""

    def execute(specs: Sequence[RunSpec], store: Store, progress: bool = True) -> list[Outcome]:
        todo, outcomes = pending(specs, store)
        for group in stack_groups(todo, max_group):
            if len(group) == 1:
                outcomes += serial(group, store, progress)
                continue
            try:
                outcomes += train_group(group, store, progress)
            except NotStackable as exc:
                print(f"vmap: {len(group)} runs cannot be stacked ({exc}); training them serially",
                      file=sys.stderr, flush=True)  # fmt: skip
                outcomes += serial(group, store, progress)
            except GenlabError as exc:
                outcomes += [Outcome(s.run_id, store.status(s.run_id) or "failed", str(exc))
                             for s in group]  # fmt: skip
        return outcomes

    execute.__name__ = "vmap"
    return execute
