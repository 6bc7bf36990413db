"""Gradient coherence: Chatterjee & Zielinski (2022), "On the Generalization Mystery", #51.

``alpha = ‖mean_i g_i‖² / mean_i ‖g_i‖²`` over per-sample loss gradients ``g_i``. It is 1 when all
samples pull the same way and about ``1/n`` when their gradients are orthogonal; real labels give
coherent gradients early in training, random labels do not.

Modes: ``last_layer`` (default) uses the classifier head's gradients in closed form,
``g_i = (e_i h_iᵀ, e_i)``, from one forward pass; ``full`` uses every parameter: for MLPs (all
parameters in linear layers) in one forward and backward with Goodfellow's per-sample norm trick,
otherwise with ``torch.func.vmap(grad)`` (exit code 2 for models it cannot trace).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.probes import PROBES
from genlab.probes._grads import (
    ctx_head_features,
    head_features,
    head_grad_sqnorm,
    linear_sums,
    per_sample_sums,
    require_classification,
    softmax_error,
    subsample,
)
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import NoParams, Params


class CoherenceParams(Params):
    """Params of ``coherence``."""

    mode: Literal["last_layer", "full"] = Field("last_layer", description="which gradients")
    max_samples: int = Field(512, ge=0, description="training samples per split (0: all)")


def coherence_last_layer(model: nn.Module, x: Tensor, y: Tensor) -> float:
    """alpha of the head's per-sample gradients, without forming them: the mean gradient is
    ``(Eᵀ H / n, mean e)`` and ``‖g_i‖² = ‖e_i‖² (‖h_i‖² + 1)``."""
    return coherence_from_features(*head_features(model, x), y)


def coherence_from_features(h: Tensor, logits: Tensor, head: nn.Linear, y: Tensor) -> float:
    """``coherence_last_layer`` from a forward pass already made."""
    e = softmax_error(logits, y).double()
    h = h.double()
    n = len(e)
    mean_sq = (e.T @ h / n).pow(2).sum()
    bias = head.bias is not None
    if bias:
        mean_sq = mean_sq + e.mean(0).pow(2).sum()
    per = head_grad_sqnorm(e, h, bias).mean()
    return float(mean_sq / per) if per > 0 else float("nan")


def coherence_of(grads: Tensor) -> float:
    """alpha of explicit per-sample gradients ``(N, P)``."""
    g = grads.double()
    per = g.pow(2).sum(1).mean()
    return float(g.mean(0).pow(2).sum() / per) if per > 0 else float("nan")


@PROBES.register(
    "coherence", CoherenceParams, papers=(51,), family="diag", tiny={"max_samples": 64}
)
def coherence(model: nn.Module, ctx: EvalContext, params: CoherenceParams) -> ProbeResult:
    """Per-sample gradient coherence alpha on each training split (Chatterjee & Zielinski, #51).

    Metric ``coherence`` per ``train/*`` split. Params: ``mode`` (``last_layer`` | ``full``),
    ``max_samples`` (a subsample drawn per evaluation step; 0: all samples).
    """
    require_classification(ctx, "coherence")
    out: ProbeResult = {}
    for name, split in ctx.splits.items():
        if not name.startswith("train/"):
            continue
        idx = subsample(len(split), params.max_samples, ctx, salt=51)
        x, y = split.x[idx], split.y[idx]
        if params.mode == "last_layer":
            h, logits, head = ctx_head_features(ctx, name)
            value = coherence_from_features(h[idx], logits[idx], head, y)
        else:
            total, norms = linear_sums(model, x, y) or per_sample_sums(model, x, y)
            mean_norm = norms.mean()
            value = float((total / len(x)).pow(2).sum() / mean_norm) if mean_norm > 0 else np.nan
        if value == value:
            out[(name, "coherence")] = value
    return out


@PROBES.register("label_fit", NoParams, papers=(51, 11), family="diag")
def label_fit(model: nn.Module, ctx: EvalContext, params: NoParams) -> ProbeResult:
    """How much label noise a model has memorised: training accuracy on the corrupted labels
    (``noisy_fit``, against the corrupted label) and on the clean ones (``clean_fit``).

    Reads the mask ``meta["noisy"]`` of tasks that corrupt labels (``digits``); used by the
    robust-mean claim of #51 ("fits fewer noisy labels") and GWA's (#11). No params.
    """
    out: ProbeResult = {}
    for name, split in ctx.splits.items():
        noisy = split.meta.get("noisy")
        if not name.startswith("train/") or not isinstance(noisy, torch.Tensor):
            continue
        ok = (ctx.logits(name).argmax(-1) == split.y).double()
        if noisy.any():
            out[(name, "noisy_fit")] = float(ok[noisy].mean())
        if (~noisy).any():
            out[(name, "clean_fit")] = float(ok[~noisy].mean())
    return out
