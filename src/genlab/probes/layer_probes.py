"""Linear probes on every layer: held-out-environment accuracy per layer (Uselis & Oh, #103).

Intermediate Layer Classifiers (Uselis & Oh, "Intermediate Layer Classifiers", ICLR 2025, #103),
zero-shot mode: a multinomial logistic regression is fitted on one layer's features of the
*training* environments (``train/*`` splits pooled) and scored on every other split, layer by layer.
Features are standardised with the training mean and std; the fit is full-batch L-BFGS on the
L2-regularised cross-entropy in float64, so it is deterministic and takes well under a second for
the digit-sized tasks.

Layers: a model with ``block_features(x) -> list[Tensor]`` (``genlab.models.cnn``) gives one pooled
feature vector per block, shallow to deep; for any other model, forward hooks on its activation
modules (ReLU, GELU, Tanh, ``Square``) in registration order, each output averaged over its spatial
or sequence positions. The last layer is the penultimate representation (the classifier's input).

Metrics: ``(split, "layer<i>_probe_acc")`` for every split and layer ``i`` (0 = shallowest) and
``("model", "n_probe_layers")``. Params: ``steps`` (L-BFGS iterations), ``l2`` (weight penalty),
``min_step`` (skip evaluations before this step, since probing every evaluation costs time),
``max_train`` (training examples used, a fixed seeded subsample when there are more), ``grid``
(1: each block's globally averaged features; g > 1: each block's output map of a model with
``blocks`` average-pooled to g x g and flattened, keeping coarse spatial layout).
"""

from __future__ import annotations

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes.base import EVAL_CHUNK, EvalContext, ProbeResult
from genlab.registry import Params


class LayerProbeParams(Params):
    """Params of ``layer_probes``."""

    steps: int = Field(100, ge=1, le=10000, description="L-BFGS iterations per layer")
    l2: float = Field(1e-3, ge=0, description="L2 penalty on the probe weights")
    min_step: int = Field(0, ge=0, description="probe only at evaluation steps >= min_step")
    max_train: int = Field(5000, ge=10, description="at most this many training examples")
    grid: int = Field(
        1, ge=1, le=8, description="image blocks: average-pool each map to grid x grid, flatten"
    )


def _activation_modules(model: nn.Module) -> list[nn.Module]:
    from genlab.models.mlp import Square

    kinds = (nn.ReLU, nn.GELU, nn.Tanh, nn.LeakyReLU, nn.SiLU, Square)
    return [m for m in model.modules() if isinstance(m, kinds)]


def _pool(t: Tensor) -> Tensor:
    """(N, C, ...) -> (N, C) by averaging positions; (N, T, D) sequences -> mean over T."""
    if t.dim() == 2:
        return t
    if t.dim() == 3:
        return t.mean(dim=1)
    return t.flatten(2).mean(dim=2)


def layer_features(model: nn.Module, x: Tensor, grid: int = 1) -> list[Tensor]:
    """Per-layer features of ``x`` (shallow to deep), in eval mode, without gradients."""
    was_training = model.training
    model.eval()
    chunks: list[list[Tensor]] = []
    try:
        with torch.inference_mode():
            for i in range(0, len(x), EVAL_CHUNK):
                xb = x[i : i + EVAL_CHUNK]
                if hasattr(model, "block_features") and grid == 1:
                    feats = [_pool(f) for f in model.block_features(xb)]
                elif isinstance(getattr(model, "blocks", None), nn.ModuleList) and grid > 1:
                    feats = _hooked(model, xb, list(model.blocks), grid)
                else:
                    feats = _hooked(model, xb, _activation_modules(model))
                chunks.append([f.double() for f in feats])
    finally:
        model.train(was_training)
    if not chunks or not chunks[0]:
        raise SpecError("layer_probes: the model has no block_features and no activation layers")
    return [torch.cat([c[j] for c in chunks]) for j in range(len(chunks[0]))]


def _grid_pool(t: Tensor, grid: int) -> Tensor:
    """(N, C, H, W) -> (N, C * g * g) by adaptive average pooling to ``g x g``, ``g <= H``."""
    if t.dim() != 4:
        return _pool(t)
    g = min(grid, t.shape[2], t.shape[3])
    return nn.functional.adaptive_avg_pool2d(t, g).flatten(1)


def _hooked(model: nn.Module, x: Tensor, modules: list[nn.Module], grid: int = 1) -> list[Tensor]:
    out: list[Tensor] = []
    handles = [
        m.register_forward_hook(lambda _m, _i, o: out.append(_grid_pool(o, grid))) for m in modules
    ]
    try:
        model(x)
    finally:
        for h in handles:
            h.remove()
    return out


def fit_linear_probe(
    x: Tensor, y: Tensor, n_classes: int, steps: int = 100, l2: float = 1e-3
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Multinomial logistic regression on standardised ``x``: ``(W, b, mean, std)``."""
    mean, std = x.mean(0), x.std(0).clamp_min(1e-6)
    z = (x - mean) / std
    w = torch.zeros(z.shape[1], n_classes, dtype=z.dtype, requires_grad=True)
    b = torch.zeros(n_classes, dtype=z.dtype, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=steps, line_search_fn="strong_wolfe")

    def closure() -> Tensor:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(z @ w + b, y) + 0.5 * l2 * (w * w).sum()
        loss.backward()
        return loss

    with torch.enable_grad():
        opt.step(closure)
    return w.detach(), b.detach(), mean, std


def probe_accuracy(probe: tuple[Tensor, Tensor, Tensor, Tensor], x: Tensor, y: Tensor) -> float:
    """Accuracy of a fitted probe on features ``x``."""
    w, b, mean, std = probe
    return ((((x - mean) / std) @ w + b).argmax(1) == y).double().mean().item()


@PROBES.register(
    "layer_probes",
    LayerProbeParams,
    papers=(103,),
    family="domain-shift",
    tiny={"steps": 10, "max_train": 200},
)
def layer_probes(model: nn.Module, ctx: EvalContext, params: LayerProbeParams) -> ProbeResult:
    """Zero-shot intermediate-layer classifiers: fit on ``train/*``, accuracy per split and layer
    (Uselis & Oh, #103)."""
    if ctx.step < params.min_step:
        return {}
    train = [n for n in ctx.splits if n.startswith("train/")]
    if not train or ctx.data.info.kind != "classification":
        return {}
    names = list(ctx.splits)
    feats = {n: layer_features(model, ctx.splits[n].x, params.grid) for n in names}
    ys = {n: ctx.splits[n].y for n in names}
    x_tr = [torch.cat([feats[n][j] for n in train]) for j in range(len(feats[train[0]]))]
    y_tr = torch.cat([ys[n] for n in train])
    if len(y_tr) > params.max_train:
        gen = torch.Generator().manual_seed(ctx.step)
        keep = torch.randperm(len(y_tr), generator=gen)[: params.max_train]
        x_tr, y_tr = [f[keep] for f in x_tr], y_tr[keep]
    n_classes = ctx.data.info.n_outputs
    out: ProbeResult = {("model", "n_probe_layers"): float(len(x_tr))}
    for j, f in enumerate(x_tr):
        probe = fit_linear_probe(f, y_tr, n_classes, params.steps, params.l2)
        for n in names:
            out[(n, f"layer{j}_probe_acc")] = probe_accuracy(probe, feats[n][j], ys[n])
    return out
