"""Sharpness and flatness of the training loss, the quantities of Wen, Li & Ma (NeurIPS 2023), #97.

- ``sam_sharpness``: the loss increase at the first-order worst case of an L2 ball of radius
  ``rho``, ``L(w + rho g/‖g‖) - L(w)`` (the inner step of SAM, Foret et al.).
- ``asam_sharpness``: the same in the adaptive ball of ASAM (Kwon et al.), scaled by ``|w|``:
  ``eps = rho_adaptive T² g / ‖T g‖`` with ``T = |w|``.
- ``hessian_top_eig``: the Hessian eigenvalue of largest magnitude, by power iteration on
  Hessian-vector products (the top one wherever the loss is locally convex-dominated).
- ``hessian_trace``: Hutchinson's estimate ``E[vᵀ H v]`` with Rademacher ``v``.

The loss is the cross-entropy for class targets and, for float (regression) targets, the squared
error of the ``mse`` method, ``(1/2N) sum_n |f(x_n) - y_n|²``. All on a training subsample, in eval mode, through ``torch.func.functional_call`` with perturbed
copies of the parameters, so the model and its ``.grad`` are never touched. Random vectors come
from a generator seeded by the evaluation step.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field
from torch import Tensor, nn
from torch.func import functional_call

from genlab.losses import cross_entropy
from genlab.probes import PROBES
from genlab.probes._grads import subsample
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import Params

Measure = Literal["sam", "asam", "top_eig", "trace"]


class SharpnessParams(Params):
    """Params of ``sharpness``."""

    measures: list[Measure] = Field(
        default_factory=lambda: ["sam", "asam", "top_eig", "trace"], min_length=1
    )
    rho: float = Field(0.05, gt=0, description="L2 radius for sam_sharpness")
    rho_adaptive: float = Field(0.5, gt=0, description="radius for asam_sharpness")
    power_iters: int = Field(20, ge=1, description="power-iteration steps for hessian_top_eig")
    hutchinson: int = Field(10, ge=1, description="random vectors for hessian_trace")
    max_samples: int = Field(512, ge=0, description="training samples per split (0: all)")


class _Loss:
    """The training loss as a function of a list of parameter tensors."""

    def __init__(self, model: nn.Module, x: Tensor, y: Tensor) -> None:
        self.model, self.x, self.y = model, x, y
        self.names = [k for k, v in model.named_parameters() if v.requires_grad]
        self.params = [dict(model.named_parameters())[k].detach() for k in self.names]
        self.buffers = {k: v.detach() for k, v in model.named_buffers()}

    def __call__(self, params: list[Tensor]) -> Tensor:
        named = dict(zip(self.names, params, strict=True))
        out = functional_call(self.model, ({**named, **self.buffers}), (self.x,))
        if self.y.is_floating_point():
            err = out - self.y.to(out.dtype).reshape(out.shape)
            return 0.5 * err.pow(2).reshape(len(err), -1).sum(1).mean()
        return cross_entropy(out, self.y)

    def grad(self, params: list[Tensor]) -> list[Tensor]:
        ps = [p.detach().requires_grad_(True) for p in params]
        return _zeros_for_none(torch.autograd.grad(self(ps), ps, allow_unused=True), ps)

    def hvp(self, v: list[Tensor]) -> list[Tensor]:
        ps = [p.detach().requires_grad_(True) for p in self.params]
        g = _zeros_for_none(
            torch.autograd.grad(self(ps), ps, create_graph=True, allow_unused=True), ps
        )
        hv = torch.autograd.grad(_dot(g, v), ps, allow_unused=True)
        return [h.detach() for h in _zeros_for_none(hv, ps)]


def _zeros_for_none(grads: tuple[Tensor | None, ...], params: list[Tensor]) -> list[Tensor]:
    """Gradients with zeros for parameters the loss does not use (e.g. a head another output
    reads)."""
    return [torch.zeros_like(p) if g is None else g for g, p in zip(grads, params, strict=True)]


def _dot(a: list[Tensor], b: list[Tensor]) -> Tensor:
    """The real inner product of two parameter lists (complex ones, e.g. FNO spectral weights,
    as pairs of reals)."""
    return sum((ai.conj() * bi).real.sum() for ai, bi in zip(a, b, strict=True))


def _norm(ts: list[Tensor]) -> Tensor:
    return torch.sqrt(_dot(ts, ts))


def sharpness_measures(
    model: nn.Module, x: Tensor, y: Tensor, params: SharpnessParams, gen: torch.Generator
) -> dict[str, float]:
    """The requested measures on ``(x, y)``; see the module docstring."""
    f = _Loss(model, x, y)
    w = f.params
    out: dict[str, float] = {}
    with torch.no_grad():
        base = float(f(w))
    if {"sam", "asam"} & set(params.measures):
        g = f.grad(w)
        if "sam" in params.measures:
            scale = params.rho / _norm(g).clamp_min(1e-12)
            with torch.no_grad():
                moved = [wi + scale * gi for wi, gi in zip(w, g, strict=True)]
                out["sam_sharpness"] = float(f(moved)) - base
        if "asam" in params.measures:
            tg = [wi.abs() * gi for wi, gi in zip(w, g, strict=True)]
            scale = params.rho_adaptive / _norm(tg).clamp_min(1e-12)
            eps = [scale * wi.abs() * t for wi, t in zip(w, tg, strict=True)]
            with torch.no_grad():
                moved = [wi + e for wi, e in zip(w, eps, strict=True)]
                out["asam_sharpness"] = float(f(moved)) - base
    if "top_eig" in params.measures:
        v = [torch.randn(p.shape, generator=gen, dtype=p.dtype) for p in w]
        eig = 0.0
        for _ in range(params.power_iters):
            n = _norm(v).clamp_min(1e-12)
            v = [t / n for t in v]
            hv = f.hvp(v)
            eig = float(_dot(v, hv))
            v = hv
        out["hessian_top_eig"] = eig
    if "trace" in params.measures:
        total = 0.0
        for _ in range(params.hutchinson):
            v = [torch.randint(0, 2, p.shape, generator=gen).to(p.dtype) * 2 - 1 for p in w]
            total += float(_dot(v, f.hvp(v)))
        out["hessian_trace"] = total / params.hutchinson
    return out


@PROBES.register(
    "sharpness",
    SharpnessParams,
    papers=(97,),
    family="diag",
    tiny={"power_iters": 3, "hutchinson": 2, "max_samples": 64},
)
def sharpness(model: nn.Module, ctx: EvalContext, params: SharpnessParams) -> ProbeResult:
    """Sharpness of the training loss: SAM and ASAM ball sharpness, Hessian top eigenvalue and
    trace (Wen, Li & Ma, #97). Metrics per ``train/*`` split: ``sam_sharpness``,
    ``asam_sharpness``, ``hessian_top_eig``, ``hessian_trace`` (those in ``measures``).
    Params: ``measures``, ``rho``, ``rho_adaptive``, ``power_iters``, ``hutchinson``,
    ``max_samples``.
    """
    out: ProbeResult = {}
    was_training = model.training
    model.eval()
    try:
        for name, split in ctx.splits.items():
            if not name.startswith("train/"):
                continue
            idx = subsample(len(split), params.max_samples, ctx, salt=97)
            gen = torch.Generator().manual_seed(ctx.step)
            for k, v in sharpness_measures(model, split.x[idx], split.y[idx], params, gen).items():
                out[(name, k)] = v
    finally:
        model.train(was_training)
    return out
