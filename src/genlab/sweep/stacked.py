"""K replicas of one model as one: flat parameters, per-replica data, a vmapped loss, fused logits.

The mechanics of the vmap executor (``genlab.sweep.vmap``), after ``torch.func``'s model
ensembling recipe: the trainable parameters the loss uses are the rows of one ``(K, P)`` leaf
tensor; ``vmap`` over ``functional_call`` gives the K losses, and one ``autograd.grad`` of their sum
gives every replica its own gradient (the replicas share no parameter, so the sum separates).

Replicas may differ in anything that leaves the shapes alone: seed, learning rate, weight decay,
the data (another ``data_seed``, or task numbers such as ``train_fraction``). Training splits of
different sizes are padded to the longest with rows labelled ``genlab.losses.IGNORE``, which the
cross-entropy skips: a mask. Before anything is written, every replica's gradient on a few of its
own examples (padded the same way) is checked against plain autograd on its own model.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.func import functional_call, vmap
from torch.nn.attention import SDPBackend, sdpa_kernel

from genlab.engine.optim import build_optimizer
from genlab.engine.train import Prepared
from genlab.losses import IGNORE
from genlab.methods.base import Method
from genlab.probes.base import EVAL_CHUNK, EvalContext
from genlab.sweep.autocompile import Autocompile
from genlab.sweep.vec_optim import Slot, VecOptimizer

TINY = 4  # examples per training split in the gradient check


class NotStackable(Exception):
    """The replicas cannot be trained as one stacked model; the message says why."""


def unstackable_reason(prep: Prepared) -> str | None:
    """Why this replica's model or method cannot be stacked, or None."""
    if prep.spec.optimizer.grad_clip is not None:
        return "optimizer.grad_clip is set (clipping is per model)"
    if type(prep.method).step is not Method.step:
        return f"method {prep.spec.method.name!r} overrides step()"
    if any(s.stream is not None for s in prep.data.train.values()):
        return "the task streams fresh batches (their shapes differ between replicas)"
    for name, mod in prep.model.named_modules():
        if isinstance(mod, nn.modules.batchnorm._BatchNorm):
            return f"module {name or 'model'} is BatchNorm (running statistics per model)"
        p = mod.p if isinstance(mod, nn.modules.dropout._DropoutNd) else getattr(mod, "dropout", 0)
        if isinstance(p, float) and p > 0:
            return f"module {name or 'model'} uses dropout (random masks per model)"
    return None


def _math_attention():
    """Attention as matmul and softmax, which vmap batches (the fused CPU kernel has no batching
    rule and would run replica by replica)."""
    return sdpa_kernel([SDPBackend.MATH])


@dataclass
class _Data:
    """One split across replicas: shared ``(N, ...)`` or stacked ``(K, N_max, ...)`` padded with
    each replica's first row (targets ``IGNORE``); ``sizes`` are the replicas' own lengths."""

    x: Tensor
    y: Tensor
    sizes: list[int]
    shared: bool

    @property
    def ragged(self) -> bool:
        return len(set(self.sizes)) > 1

    def keep(self, rows: Tensor) -> None:
        self.sizes = [self.sizes[i] for i in rows.tolist()]
        if not self.shared:
            self.x, self.y = self.x[rows], self.y[rows]


def _stack_split(splits: list, shared: bool, what: str) -> _Data:
    sizes = [len(s) for s in splits]
    if shared:
        return _Data(splits[0].x, splits[0].y, sizes, True)
    ref = splits[0]
    for s in splits[1:]:
        same = s.x.shape[1:] == ref.x.shape[1:] and s.y.shape[1:] == ref.y.shape[1:]
        if not same or s.x.dtype != ref.x.dtype or s.y.dtype != ref.y.dtype:
            raise NotStackable(f"{what} differs in shape or dtype between replicas")
    n = max(sizes)
    if min(sizes) < n and ref.y.is_floating_point():
        raise NotStackable(f"{what} differs in size and its targets are not labels (no mask)")
    xs = [torch.cat([s.x, s.x[:1].expand(n - len(s), *s.x.shape[1:])]) for s in splits]
    ys = [torch.cat([s.y, s.y.new_full((n - len(s), *s.y.shape[1:]), IGNORE)]) for s in splits]
    return _Data(torch.stack(xs), torch.stack(ys), sizes, False)


def _check_structure(preps: list[Prepared]) -> None:
    p0 = preps[0]
    sig0 = [(n, t.shape, t.dtype, t.requires_grad) for n, t in p0.model.named_parameters()]
    bufs0 = [(n, t.shape, t.dtype) for n, t in p0.model.named_buffers()]
    for p in preps[1:]:
        if [(n, t.shape, t.dtype, t.requires_grad) for n, t in p.model.named_parameters()] != sig0:
            raise NotStackable("the replicas' parameters differ in names or shapes")
        if [(n, t.shape, t.dtype) for n, t in p.model.named_buffers()] != bufs0:
            raise NotStackable("the replicas' buffers differ in names or shapes")
        if p.data.train.keys() != p0.data.train.keys():
            raise NotStackable("the replicas have different training environments")
    if len({t[2] for t in sig0 if t[3]}) > 1:
        raise NotStackable("the trainable parameters have more than one dtype")


class Stacked:
    """The stacked state of ``preps`` (prepared by ``genlab.engine.prepare``). ``shared_data``:
    every replica has the same data (same task and ``data_seed``), so batches are not copied K
    times. Raises NotStackable when the replicas cannot be stacked exactly."""

    def __init__(self, preps: list[Prepared], shared_data: bool) -> None:
        for p in preps:
            reason = unstackable_reason(p)
            if reason:
                raise NotStackable(reason)
        _check_structure(preps)
        self.preps = list(preps)
        p0 = preps[0]
        self.base = copy.deepcopy(p0.model).train()
        self.method = p0.method
        self.shared = shared_data
        tiny = min(TINY, *(len(s) for p in preps for s in p.data.train.values()))
        refs = [_reference_grads(p, tiny) for p in preps]
        used = {n for n, g in refs[0].items() if g is not None}
        if any({n for n, g in r.items() if g is not None} != used for r in refs[1:]):
            raise NotStackable("the replicas' losses use different parameters")
        self.trainable = list(refs[0])
        named = [dict(p.model.named_parameters()) for p in preps]
        self.slots, offset = [], 0
        for n in self.trainable:
            if n in used:
                self.slots.append(Slot(n, offset, tuple(named[0][n].shape)))
                offset += named[0][n].numel()
        rows = [torch.cat([d[s.name].detach().reshape(-1) for s in self.slots]) for d in named]
        self.flat = torch.stack(rows).requires_grad_(True)
        consts = {n: [d[n].detach() for d in named] for n in named[0] if n not in used}
        bufs = [dict(p.model.named_buffers()) for p in preps]
        consts.update({n: [d[n] for d in bufs] for n in bufs[0]})
        self.consts, self.const_dims = {}, {}
        for n, ts in consts.items():
            same = all(torch.equal(t, ts[0]) for t in ts[1:])
            self.consts[n] = ts[0] if same else torch.stack(ts)
            self.const_dims[n] = None if same else 0
        self.envs = {
            k: _stack_split([p.data.train[k] for p in preps], shared_data, f"training split {k!r}")
            for k in p0.data.train
        }
        self._evals: dict[str, _Data] | None = None  # built at the first fused evaluation
        self._fixed: tuple[dict, dict] | None = None
        self._check_grads(refs, tiny)
        self.trial: Autocompile | None = None  # set by the caller to try torch.compile
        self.fuse_eval: bool | None = None  # see eval_logits
        self._compiled: dict[str, Callable] = {}

    # ---- the stacked step ---------------------------------------------------------------------

    def _params(self, row: Tensor) -> dict[str, Tensor]:
        # one split, not a slice per parameter: its backward is one concatenation
        parts = row.split([s.numel for s in self.slots])
        return {s.name: t.view(s.shape) for s, t in zip(self.slots, parts, strict=True)}

    def _loss(self, row: Tensor, consts: dict[str, Tensor], batches: dict) -> Tensor:
        def fmodel(x: Tensor) -> Tensor:
            return functional_call(self.base, {**consts, **self._params(row)}, (x,))

        value, logs = self.method.loss(fmodel, batches)
        if logs:
            raise NotStackable(f"method {type(self.method).__name__} logs extra values")
        return value

    def losses(self, batches: dict, dims: dict) -> Tensor:
        """The K losses ``(K,)`` on ``batches`` (``dims``: vmap's in_dims for them), with grad."""
        with _math_attention():
            fn = vmap(self._loss, in_dims=(0, self.const_dims, dims))
            return fn(self.flat, self.consts, batches)

    def grads(self) -> tuple[Tensor, Tensor]:
        """One step's K losses and the gradient ``(K, P)`` of each replica's own loss (compiled
        where ``self.trial``, an ``Autocompile``, found it faster)."""
        batches, dims = self.batches()
        compiled = self.trial is not None and self.trial.compiled
        t = time.process_time()
        try:
            losses = (self._compiled_losses if compiled else self.losses)(batches, dims)
            (g,) = torch.autograd.grad(losses.sum(), self.flat)
        except Exception as exc:
            if not compiled:
                raise
            self.trial.fail(exc)  # the same batches again, eager: nothing has changed yet
            losses = self.losses(batches, dims)
            (g,) = torch.autograd.grad(losses.sum(), self.flat)
        if self.trial is not None:
            self.trial.observe(time.process_time() - t)
        return losses.detach(), g

    def _compiled_losses(self, batches: dict, dims: dict) -> Tensor:
        key = repr(dims)
        if key not in self._compiled:

            def run(flat: Tensor, consts: dict, batches: dict) -> Tensor:
                return vmap(self._loss, in_dims=(0, self.const_dims, dims))(flat, consts, batches)

            self._compiled[key] = torch.compile(run, backend="aot_eager")
        with _math_attention():
            return self._compiled[key](self.flat, self.consts, batches)

    def batches(self) -> tuple[dict, dict]:
        """The next batch of every replica (each from its own sampler) and their in_dims."""
        if self._fixed is not None:
            return self._fixed
        draws = [p.sampler.indices() for p in self.preps]
        if all(d[k] is None for d in draws for k in self.envs):  # full batch: always the same
            self._fixed = self._full()
            return self._fixed
        out, dims = {}, {}
        for k, data in self.envs.items():
            idx = [
                torch.arange(n) if d[k] is None else d[k]
                for d, n in zip(draws, data.sizes, strict=True)
            ]
            out[k], dims[k] = _gather(data, idx), (0, 0)
        return out, dims

    def _full(self) -> tuple[dict, dict]:
        out = {k: (d.x, d.y) for k, d in self.envs.items()}
        return out, {k: (None, None) if d.shared else (0, 0) for k, d in self.envs.items()}

    def speedup(self, reps: int = 3) -> float:
        """How many times faster one stacked step (gradients and update) is than K steps of one
        replica alone, timed on batches of the run's shapes (best of ``reps``) on copies. Times
        are this process's CPU seconds, which other processes' load does not inflate."""
        out, dims, own = {}, {}, {}
        bs, k_all = self.preps[0].sampler.batch_size, len(self.preps)
        for k, d in self.envs.items():
            if bs is None or bs >= min(d.sizes):  # full batch
                out[k], dims[k] = (d.x, d.y), (None, None) if d.shared else (0, 0)
                x0, y0 = (d.x, d.y) if d.shared else (d.x[0], d.y[0])
                own[k] = (x0[: d.sizes[0]], y0[: d.sizes[0]])
            else:
                out[k], dims[k] = _gather(d, [torch.arange(bs)] * k_all), (0, 0)
                own[k] = (out[k][0][0], out[k][1][0])
        spec = self.preps[0].spec
        model = copy.deepcopy(self.preps[0].model).train()
        method, opt = copy.deepcopy(self.method), build_optimizer(model, spec.optimizer)
        vec, flat = VecOptimizer(spec.optimizer, self.trainable, self.slots), self.flat.detach()
        lr = torch.full((k_all, 1), spec.optimizer.lr, dtype=torch.float64)
        wd = torch.full_like(lr, spec.optimizer.weight_decay)

        def stacked() -> None:  # gradients, and an update of a copy of the parameters
            (g,) = torch.autograd.grad(self.losses(out, dims).sum(), self.flat)
            vec.update(flat.clone(), g, lr, wd)

        def single() -> None:  # the engine's step of one replica's copy
            method.step(model, opt, own)

        best = {stacked: float("inf"), single: float("inf")}
        for _ in range(reps + 1):  # the first round warms up
            for fn in best:
                t = time.process_time()
                fn()
                best[fn] = min(best[fn], time.process_time() - t)
        return len(self.preps) * best[single] / best[stacked]

    # ---- the gradient check -----------------------------------------------------------------

    def _check_grads(self, refs: list[dict[str, Tensor | None]], tiny: int) -> None:
        """Vmapped gradients on a few examples of each replica equal autograd on its own model."""
        pad = any(d.ragged for d in self.envs.values())
        out, dims = {}, {}
        for k, d in self.envs.items():
            if d.shared:
                out[k], dims[k] = (d.x[:tiny], d.y[:tiny]), (None, None)
            else:  # with two masked rows when the group pads, to check the loss skips them
                x, y = d.x[:, :tiny], d.y[:, :tiny]
                if pad:
                    x = torch.cat([x, x[:, :2]], 1)
                    y = torch.cat([y, torch.full_like(y[:, :2], IGNORE)], 1)
                out[k], dims[k] = (x, y), (0, 0)
        before = {n: t.clone() for n, t in self.consts.items()}
        try:
            (g,) = torch.autograd.grad(self.losses(out, dims).sum(), self.flat)
        except NotStackable:
            raise
        except Exception as exc:  # torch.func refuses the model or the loss
            raise NotStackable(f"torch.func cannot vmap this model/method: {exc}") from None
        if any(not torch.equal(before[n], t) for n, t in self.consts.items()):
            raise NotStackable("the loss changes buffers (state per model)")
        for i, ref in enumerate(refs):
            for s in self.slots:
                got = g[i, s.offset : s.offset + s.numel]
                want = ref[s.name].reshape(-1)
                if not torch.allclose(got, want, rtol=1e-3, atol=1e-6):
                    raise NotStackable(f"vmapped gradient of {s.name} differs from autograd")

    # ---- evaluation ---------------------------------------------------------------------------

    def _eval_splits(self) -> dict[str, _Data]:
        """The evaluation splits every replica has, with the same trailing shapes."""
        per = [{k: s for k, s in p.data.splits().items() if len(s)} for p in self.preps]
        out = {}
        for name in per[0]:
            if all(name in d for d in per[1:]):
                try:
                    out[name] = _stack_split([d[name] for d in per], self.shared, name)
                except NotStackable:
                    continue  # evaluated replica by replica by the probes themselves
        return out

    def eval_logits(self) -> list[dict[str, Tensor]]:
        """``logits()``, or nothing to prefill (``{}`` per replica: each replica's probes run its
        own forward) where that is faster: decided on the first call by timing both in CPU
        seconds, as a stacked forward wins for small models and loses for large ones (measured:
        16 grokking MLPs, fused faster; 4 d = 128 transformers on 9,409 examples, 1.7x slower)."""
        if self.fuse_eval is False:
            self._evals = None  # not needed again
            return [{} for _ in self.preps]
        t = time.process_time()
        out = self.logits()
        fused = time.process_time() - t
        if self.fuse_eval is None:
            ctx = EvalContext(self.load_into(0), self.preps[0].data, 0)
            t = time.process_time()
            for name in out[0]:
                ctx.logits(name)
            self.fuse_eval = fused < len(self.preps) * (time.process_time() - t)
        return out

    @torch.no_grad()
    def logits(self) -> list[dict[str, Tensor]]:
        """Every replica's logits on the shared evaluation splits, one vmapped forward per chunk
        (in eval mode, as ``EvalContext.logits``)."""
        if self._evals is None:
            self._evals = self._eval_splits()
        k_all = len(self.preps)
        chunk = max(64, EVAL_CHUNK // k_all)
        out: list[dict[str, Tensor]] = [{} for _ in range(k_all)]

        def fwd(row: Tensor, consts: dict, x: Tensor) -> Tensor:
            return functional_call(self.base, {**consts, **self._params(row)}, (x,))

        self.base.eval()
        try:
            with _math_attention():
                for name, d in self._evals.items():
                    fn = vmap(fwd, in_dims=(0, self.const_dims, None if d.shared else 0))
                    n = d.x.shape[0 if d.shared else 1]
                    parts = [
                        fn(
                            self.flat,
                            self.consts,
                            d.x[i : i + chunk] if d.shared else d.x[:, i : i + chunk],
                        )
                        for i in range(0, n, chunk)
                    ]
                    full = torch.cat(parts, 1)
                    for i, size in enumerate(d.sizes):
                        out[i][name] = full[i, :size]
        finally:
            self.base.train()
        return out

    # ---- replicas ---------------------------------------------------------------------------

    def load_into(self, i: int) -> nn.Module:
        """Copy replica ``i``'s parameters into its own module (for probes and checkpoints)."""
        model = self.preps[i].model
        named = dict(model.named_parameters())
        row = self.flat[i].detach()
        with torch.no_grad():
            for s in self.slots:
                named[s.name].copy_(row[s.offset : s.offset + s.numel].view(s.shape))
        return model

    def keep(self, rows: list[int]) -> None:
        """Keep only replicas ``rows`` (the others finished): less work for the rest."""
        idx = torch.tensor(rows)
        self.preps = [self.preps[i] for i in rows]
        self.flat = self.flat.detach()[idx].requires_grad_(True)
        for n, dim in self.const_dims.items():
            if dim == 0:
                self.consts[n] = self.consts[n][idx]
        for d in (*self.envs.values(), *(self._evals or {}).values()):
            d.keep(idx)
        self._fixed = None


def _gather(data: _Data, idx: list[Tensor]) -> tuple[Tensor, Tensor]:
    """Rows ``idx[k]`` of replica k, stacked ``(K, R, ...)``; shorter ones padded with masked rows."""
    r = max(len(i) for i in idx)
    ragged = any(len(i) < r for i in idx)
    if ragged:
        valid = torch.stack([torch.arange(r) < len(i) for i in idx])
        idx = [torch.cat([i, i.new_zeros(r - len(i))]) for i in idx]
    rows = torch.stack(idx)
    if data.shared:
        x, y = data.x[rows], data.y[rows]
    else:
        ks = torch.arange(len(idx)).unsqueeze(1)
        x, y = data.x[ks, rows], data.y[ks, rows]
    if ragged:
        y = y.masked_fill(~valid.view(*valid.shape, *[1] * (y.dim() - 2)), IGNORE)
    return x, y


def _reference_grads(prep: Prepared, n: int) -> dict[str, Tensor | None]:
    """Plain autograd on a copy of the replica's model, on its first ``n`` training examples."""
    batches = {k: (s.x[:n], s.y[:n]) for k, s in prep.data.train.items()}
    model, method = copy.deepcopy(prep.model).train(), copy.deepcopy(prep.method)
    value, _ = method.loss(model, batches)
    value.backward()
    return {n: p.grad for n, p in model.named_parameters() if p.requires_grad}
