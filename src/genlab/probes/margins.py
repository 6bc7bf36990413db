"""Margins of the training data: Mouton, Theunissen & Davel (AAAI 2024), catalogue #99.

- ``output_margin``: ``z_y - max_{k≠y} z_k`` on the logits.
- ``hidden_margin``: the exact distance to the decision boundary in the head's input space,
  ``min_k (z_y - z_k) / ‖w_y - w_k‖`` (the head is linear there).
- ``input_margin``: the distance in input space to the decision boundary found by DeepFool
  (Moosavi-Dezfooli et al.): repeated linearised steps towards the nearest other class.
- ``constrained_margin``: the same search restricted to the top principal components of the
  training inputs (those explaining ``pca_variance`` of the variance), the paper's proposal:
  it measures distance along the directions the data actually varies in.

Each is averaged over correctly classified training samples (a subsample of ``max_samples``);
a DeepFool search that does not cross the boundary within ``max_iter`` steps is left out.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.probes import PROBES
from genlab.probes._grads import head_features, require_classification, subsample
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import Params

Kind = Literal["output", "hidden", "input", "constrained"]


class MarginParams(Params):
    """Params of ``margins``."""

    measures: list[Kind] = Field(
        default_factory=lambda: ["output", "hidden", "input", "constrained"], min_length=1
    )
    max_samples: int = Field(256, ge=1, description="training samples per split")
    max_iter: int = Field(50, ge=1, description="DeepFool steps")
    overshoot: float = Field(0.02, ge=0, description="DeepFool overshoot")
    pca_variance: float = Field(
        0.9, gt=0, le=1, description="share of variance the constrained subspace keeps"
    )
    subspace: Literal["top", "bottom"] = Field(
        "top",
        description="'bottom': the same number of least-variance directions, off the "
        "data manifold (a negative control for #99)",
    )


def principal_basis(x: Tensor, variance: float, subspace: str = "top") -> Tensor:
    """``(D, k)`` orthonormal top principal directions of flattened ``x`` that explain
    ``variance`` of its total variance (``bottom``: the ``k`` directions of least variance)."""
    flat = x.flatten(1).double()
    _, s, vh = torch.linalg.svd(flat - flat.mean(0), full_matrices=True)
    share = (s**2).cumsum(0) / (s**2).sum()
    k = int((share < variance).sum()) + 1
    return (vh[:k] if subspace == "top" else vh[-k:]).T.to(x.dtype)


def _class_grads(model: nn.Module, x: Tensor) -> tuple[Tensor, Tensor]:
    """Logits ``(N, C)`` and their input gradients ``(N, C, D)`` (samples are independent)."""
    xv = x.detach().requires_grad_(True)
    z = model(xv)
    n_classes = z.shape[-1]
    grads = [
        torch.autograd.grad(z[:, k].sum(), xv, retain_graph=k < n_classes - 1)[0].flatten(1)
        for k in range(n_classes)
    ]
    return z.detach(), torch.stack(grads, 1)


def deepfool_distance(
    model: nn.Module, x: Tensor, y: Tensor, basis: Tensor | None, max_iter: int, overshoot: float
) -> Tensor:
    """Per-sample L2 distance from ``x`` to where the prediction leaves ``y`` (NaN if not found);
    with ``basis`` (``(D, k)``), steps stay in its span (the constrained margin of #99)."""
    x0 = x.detach()
    r_tot = torch.zeros_like(x0.flatten(1))
    done = torch.zeros(len(x0), dtype=torch.bool)
    rows = torch.arange(len(x0))
    for _ in range(max_iter):
        xa = (x0.flatten(1) + (1 + overshoot) * r_tot).reshape(x0.shape)
        z, g = _class_grads(model, xa)
        done |= z.argmax(-1) != y
        if done.all():
            break
        w = g - g[rows, y].unsqueeze(1)  # (N, C, D): gradient of z_k - z_y
        f = z - z[rows, y].unsqueeze(1)  # (N, C): z_k - z_y (< 0 before the boundary)
        if basis is not None:
            w = (w @ basis) @ basis.T
        wn = w.norm(dim=-1).clamp_min(1e-12)
        ratio = f.abs() / wn
        ratio[rows, y] = float("inf")
        k = ratio.argmin(1)
        step = (ratio[rows, k] + 1e-4).unsqueeze(1) * w[rows, k] / wn[rows, k].unsqueeze(1)
        r_tot = torch.where(done.unsqueeze(1), r_tot, r_tot + step)
    dist = ((1 + overshoot) * r_tot).norm(dim=1)
    return torch.where(done, dist, torch.full_like(dist, float("nan")))


def margins_of(
    model: nn.Module, x: Tensor, y: Tensor, params: MarginParams, basis: Tensor | None
) -> dict[str, float]:
    """Mean margins over the correctly classified samples of ``(x, y)``."""
    h, z, head = head_features(model, x)
    ok = z.argmax(-1) == y
    out: dict[str, float] = {}
    if not ok.any():
        return out
    h, z, x, y = h[ok], z[ok], x[ok], y[ok]
    rows = torch.arange(len(y))
    gap = z[rows, y].unsqueeze(1) - z  # z_y - z_k
    if "output" in params.measures:
        other = gap.clone()
        other[rows, y] = float("inf")
        out["output_margin"] = float(other.min(1).values.mean())
    if "hidden" in params.measures:
        w = head.weight.detach()
        dw = (w[y].unsqueeze(1) - w.unsqueeze(0)).norm(dim=-1)  # ‖w_y - w_k‖, (N, C)
        d = gap / dw.clamp_min(1e-12)
        d[rows, y] = float("inf")
        out["hidden_margin"] = float(d.min(1).values.mean())
    was_training = model.training
    model.eval()
    try:
        for kind, b in (("input", None), ("constrained", basis)):
            if kind in params.measures:
                dist = deepfool_distance(model, x, y, b, params.max_iter, params.overshoot)
                found = dist[~dist.isnan()]
                if len(found):
                    out[f"{kind}_margin"] = float(found.mean())
    finally:
        model.train(was_training)
    return out


@PROBES.register(
    "margins", MarginParams, papers=(99,), family="diag", tiny={"max_samples": 16, "max_iter": 5}
)
def margins(model: nn.Module, ctx: EvalContext, params: MarginParams) -> ProbeResult:
    """Output, hidden-layer, input and constrained input margins of the training data
    (Mouton et al., #99). Metrics per ``train/*`` split: ``output_margin``, ``hidden_margin``,
    ``input_margin``, ``constrained_margin`` (those in ``measures``). Params: ``measures``,
    ``max_samples``, ``max_iter``, ``overshoot``, ``pca_variance``.
    """
    require_classification(ctx, "margins")
    out: ProbeResult = {}
    for name, split in ctx.splits.items():
        if not name.startswith("train/"):
            continue
        p = params
        if not split.x.is_floating_point():  # token inputs: no input space to move in
            kept = [m for m in p.measures if m in ("output", "hidden")]
            if not kept:
                continue
            p = p.model_copy(update={"measures": kept})
        basis = (
            principal_basis(split.x, p.pca_variance, p.subspace)
            if "constrained" in p.measures
            else None
        )
        idx = subsample(len(split), p.max_samples, ctx, salt=99)
        for k, v in margins_of(model, split.x[idx], split.y[idx], p, basis).items():
            out[(name, k)] = v
    return out
