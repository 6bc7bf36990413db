"""Per-sample gradients for the diagnostic probes: a closed-form last-layer path and torch.func.

Last layer: for softmax cross-entropy on logits ``z = W h + b``, the gradient of sample ``i`` is
``e_i h_iᵀ`` for ``W`` and ``e_i`` for ``b``, with ``e_i = softmax(z_i) - onehot(y_i)``. The head's
input ``h`` is caught by a forward hook on the model's last ``nn.Linear``, so any ``nn.Module``
that ends in a linear layer works, MLP or not. Full model: ``torch.func.vmap(grad(...))`` over
``functional_call``; models that cannot be traced that way raise a ``SpecError`` (exit code 2).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from genlab.errors import SpecError
from genlab.losses import cross_entropy
from genlab.probes.base import EvalContext


def require_classification(ctx: EvalContext, probe: str) -> None:
    """Raise ``SpecError`` unless the task gives one class label per example (these probes
    differentiate the cross-entropy of ``(N, C)`` logits)."""
    if ctx.data.info.kind != "classification":
        raise SpecError(
            f"probe {probe!r} needs a classification task (one class label per example), "
            f"got a {ctx.data.info.kind} task"
        )


def last_linear(model: nn.Module) -> nn.Linear:
    """The last ``nn.Linear`` in ``model.modules()`` (taken to be the classifier head)."""
    head = None
    for m in model.modules():
        if isinstance(m, nn.Linear):
            head = m
    if head is None:
        raise SpecError(f"{type(model).__name__} has no nn.Linear layer for a last-layer probe")
    return head


def subsample(n: int, max_samples: int, ctx: EvalContext, salt: int = 0) -> Tensor:
    """Indices of at most ``max_samples`` of ``n`` examples, drawn from a generator seeded by the
    evaluation step (so probes never move the training RNG); all, in order, when ``n`` fits."""
    if max_samples <= 0 or n <= max_samples:
        return torch.arange(n)
    gen = torch.Generator().manual_seed(1_000_003 * ctx.step + salt)
    return torch.randperm(n, generator=gen)[:max_samples].sort().values


def head_features(model: nn.Module, x: Tensor) -> tuple[Tensor, Tensor, nn.Linear]:
    """``(h, logits, head)``: the input of the last linear layer and the logits, in eval mode."""
    head = last_linear(model)
    caught: list[Tensor] = []
    hook = head.register_forward_hook(lambda mod, inp, out: caught.append(inp[0].detach()))
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            logits = model(x)
    finally:
        hook.remove()
        model.train(was_training)
    h = caught[-1].flatten(1)
    if logits.dim() != 2 or h.shape != (len(x), head.in_features):
        raise SpecError(
            "last-layer probes need a model whose last nn.Linear maps one feature vector per "
            f"example to (N, C) logits; {type(model).__name__} does not"
        )
    return h, logits, head


def ctx_head_features(ctx: EvalContext, split: str) -> tuple[Tensor, Tensor, nn.Linear]:
    """``head_features`` of a whole split, computed once per evaluation and shared by the probes
    (gwa, coherence, margins); it also fills ``ctx.logits``'s cache so no probe runs it twice."""
    cache = ctx.__dict__.setdefault("_head_cache", {})
    if split not in cache:
        cache[split] = head_features(ctx.model, ctx.splits[split].x)
        ctx._cache.setdefault(split, cache[split][1])
    return cache[split]


def softmax_error(logits: Tensor, y: Tensor) -> Tensor:
    """``e = softmax(z) - onehot(y)``: d loss / d logits per sample for cross-entropy."""
    return logits.softmax(-1) - F.one_hot(y, logits.shape[-1]).to(logits.dtype)


def head_grad_dot(e: Tensor, h: Tensor, v_w: Tensor, v_b: Tensor | None) -> Tensor:
    """``<g_i, (v_w, v_b)>`` for every sample without forming ``g_i = e_i h_iᵀ``."""
    out = ((e @ v_w) * h).sum(-1)
    return out + e @ v_b if v_b is not None else out


def head_grad_sqnorm(e: Tensor, h: Tensor, bias: bool) -> Tensor:
    """``‖g_i‖²`` of the head gradient: ``‖e_i‖² (‖h_i‖² + [bias])``."""
    return e.pow(2).sum(-1) * (h.pow(2).sum(-1) + (1.0 if bias else 0.0))


def _per_sample_fn(model: nn.Module):
    """``vmap(grad(loss of one sample))`` over the model's trainable parameters."""
    from torch.func import functional_call, grad, vmap

    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def loss_one(p: dict[str, Tensor], xi: Tensor, yi: Tensor) -> Tensor:
        out = functional_call(model, (p, buffers), (xi.unsqueeze(0),))
        return cross_entropy(out, yi.unsqueeze(0))

    return vmap(grad(loss_one), in_dims=(None, 0, 0))


def _chunks(model: nn.Module, x: Tensor, y: Tensor, chunk: int):
    """Per-sample gradient dicts of ``chunk`` samples at a time, in eval mode; a model that
    torch.func cannot trace raises ``SpecError``."""
    params = {k: v.detach() for k, v in model.named_parameters() if v.requires_grad}
    fn = _per_sample_fn(model)
    was_training = model.training
    model.eval()
    try:
        for i in range(0, len(x), chunk):
            yield fn(params, x[i : i + chunk], y[i : i + chunk])
    except (RuntimeError, NotImplementedError) as exc:
        raise SpecError(
            f"{type(model).__name__} cannot give per-sample gradients through torch.func "
            f"(vmap(grad)): {str(exc).splitlines()[0]}; use the last-layer mode instead"
        ) from None
    finally:
        model.train(was_training)


def per_sample_grads(model: nn.Module, x: Tensor, y: Tensor, chunk: int = 256) -> Tensor:
    """``(N, P)`` flattened per-sample gradients of the cross-entropy w.r.t. every trainable
    parameter, by ``torch.func.vmap(grad)`` in eval mode (dropout off, batch-norm stats fixed)."""
    rows = [
        torch.cat([t.reshape(t.shape[0], -1) for t in g.values()], dim=1)
        for g in _chunks(model, x, y, chunk)
    ]
    return torch.cat(rows)


def per_sample_sums(
    model: nn.Module, x: Tensor, y: Tensor, chunk: int = 64
) -> tuple[Tensor, Tensor]:
    """``(sum_i g_i, ‖g_i‖² per sample)`` without holding all per-sample gradients at once
    (float64 accumulation); what gradient coherence needs."""
    total: Tensor | None = None
    norms = []
    for g in _chunks(model, x, y, chunk):
        flat = [t.reshape(t.shape[0], -1) for t in g.values()]
        s = torch.cat([f.sum(0) for f in flat]).double()
        total = s if total is None else total + s
        norms.append(sum(f.double().pow(2).sum(1) for f in flat))
    assert total is not None
    return total, torch.cat(norms)


def linear_sums(model: nn.Module, x: Tensor, y: Tensor) -> tuple[Tensor, Tensor] | None:
    """``per_sample_sums`` in one forward and one backward, for models whose trainable
    parameters all sit in ``nn.Linear`` layers applied once to ``(N, D)`` inputs (MLPs): the
    per-sample gradient of a linear layer is ``δ_i a_iᵀ``, so ``‖g_i‖² = Σ ‖δ_i‖² (‖a_i‖² + 1)``
    (Goodfellow's trick). ``None`` when the model is not of that form (use ``per_sample_sums``)."""
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    trainable = {id(p) for p in model.parameters() if p.requires_grad}
    in_linear = {id(p) for m in linears for p in m.parameters() if p.requires_grad}
    if not linears or trainable != in_linear:
        return None
    acts: dict[int, list[Tensor]] = {id(m): [] for m in linears}
    outs: dict[int, list[Tensor]] = {id(m): [] for m in linears}

    def hook(mod: nn.Module, inp: tuple[Tensor, ...], out: Tensor) -> None:
        acts[id(mod)].append(inp[0].detach())
        outs[id(mod)].append(out)

    handles = [m.register_forward_hook(hook) for m in linears]
    was_training = model.training
    model.eval()
    try:
        with torch.enable_grad():
            logits = model(x)
            if any(len(v) != 1 or v[0].dim() != 2 for v in acts.values()):
                return None  # a layer applied twice, or to sequences: the trick does not hold
            params = [p for p in model.parameters() if p.requires_grad]
            loss = cross_entropy(logits, y, reduction="sum")
            outputs = [outs[id(m)][0] for m in linears]
            grads = torch.autograd.grad(loss, params + outputs)
    finally:
        for h in handles:
            h.remove()
        model.train(was_training)
    total = torch.cat([g.reshape(-1) for g in grads[: len(params)]]).double()
    norms = torch.zeros(len(x), dtype=torch.float64)
    for m, delta in zip(linears, grads[len(params) :], strict=True):
        a_sq = acts[id(m)][0].double().pow(2).sum(1)
        d_sq = delta.double().pow(2).sum(1)
        w_part = d_sq * a_sq if m.weight.requires_grad else 0.0
        b_part = d_sq if m.bias is not None and m.bias.requires_grad else 0.0
        norms = norms + w_part + b_part
    return total, norms
