"""Gradient-weight alignment (GWA): Hoelzl, Rueckert & Kaissis (NeurIPS 2025), catalogue #11.

For each training sample, the cosine between its descent direction on the classifier head,
``-g_i = -(e_i h_iᵀ, e_i)``, and the head's weights ``(W, b)``; ``e_i = softmax(z_i) - onehot(y_i)``
and ``h_i`` is the head's input. It is computed in closed form from one forward pass (no backward):
``<-g_i, W> = -e_iᵀ (W h_i + b)`` and ``‖g_i‖² = ‖e_i‖² (‖h_i‖² + 1)``. The epoch score is
``mean(cos) / (excess kurtosis(cos) + 1.2)``: coherent, unimodal alignment scores high.

Timing: the paper computes GWA "before the optimiser step" of each epoch. A probe at evaluation
step ``t`` sees the weights after update ``t``, which are exactly the weights before update
``t + 1``. The official code (github.com/hlzl/gwa, ``src/train.py``) keeps each sample's score
from the update of the epoch that saw it and takes the epoch's GWA over those; this probe scores
every sample with the weights at the evaluation step, so early in training, where the weights
move fast within an epoch, it is not smoothed the way the paper's per-epoch score is.
"""

from __future__ import annotations

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.probes import PROBES
from genlab.probes._grads import (
    ctx_head_features,
    head_features,
    require_classification,
    softmax_error,
    subsample,
)
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import Params


class GWAParams(Params):
    """Params of ``gwa``."""

    max_samples: int = Field(0, ge=0, description="training samples per split (0: all of them)")


def gwa_per_sample(model: nn.Module, x: Tensor, y: Tensor) -> Tensor:
    """Per-sample cosine between the head's descent direction and its weights (the attribution
    scores of #11: low or negative values flag samples that pull against what the model learned)."""
    return gwa_from_features(*head_features(model, x), y)


def gwa_from_features(h: Tensor, logits: Tensor, head: nn.Linear, y: Tensor) -> Tensor:
    """``gwa_per_sample`` from the head's inputs ``h`` and the logits of a forward pass already
    made (the closed form: no backward, no second forward)."""
    e = softmax_error(logits, y)
    w, b = head.weight.detach(), head.bias
    dot = -((e @ w) * h).sum(-1)
    w_sq = w.pow(2).sum()
    h_sq = h.pow(2).sum(-1)
    if b is not None:
        dot = dot - e @ b.detach()
        w_sq = w_sq + b.detach().pow(2).sum()
        h_sq = h_sq + 1.0
    g_norm = e.norm(dim=-1) * h_sq.sqrt()
    return dot / (g_norm * w_sq.sqrt()).clamp_min(1e-12)


def excess_kurtosis(v: Tensor) -> float:
    """Fisher (excess) kurtosis ``m4 / m2² - 3``; 0 for a Gaussian, NaN for a constant."""
    c = v.double() - v.double().mean()
    m2 = c.pow(2).mean()
    return float(c.pow(4).mean() / m2.pow(2) - 3.0) if m2 > 0 else float("nan")


def gwa_score(cos: Tensor) -> float:
    """The epoch score of #11: mean alignment over (excess kurtosis + 1.2)."""
    return float(cos.double().mean()) / (excess_kurtosis(cos) + 1.2)


def noise_auroc(cos: Tensor, noisy: Tensor) -> float:
    """AUROC of ``-cos`` for telling corrupted labels from clean ones (0.5: no separation)."""
    from sklearn.metrics import roc_auc_score  # lazy: importing it costs seconds

    noisy = noisy.bool()
    if noisy.all() or not noisy.any():
        return float("nan")
    return float(roc_auc_score(noisy.numpy(), (-cos).double().numpy()))


@PROBES.register("gwa", GWAParams, papers=(11,), family="diag")
def gwa(model: nn.Module, ctx: EvalContext, params: GWAParams) -> ProbeResult:
    """Gradient-weight alignment on each training split (Hoelzl et al., #11).

    Metrics per ``train/*`` split: ``gwa`` (mean / (excess kurtosis + 1.2)), ``gwa_mean``,
    ``gwa_kurtosis``, and ``gwa_noise_auroc`` when the task marks corrupted labels in
    ``meta["noisy"]``. Params: ``max_samples`` (0: every training sample).
    """
    require_classification(ctx, "gwa")
    out: ProbeResult = {}
    for name, split in ctx.splits.items():
        if not name.startswith("train/"):
            continue
        idx = subsample(len(split), params.max_samples, ctx)
        h, logits, head = ctx_head_features(ctx, name)
        cos = gwa_from_features(h[idx], logits[idx], head, split.y[idx])
        out[(name, "gwa")] = gwa_score(cos)
        out[(name, "gwa_mean")] = float(cos.double().mean())
        out[(name, "gwa_kurtosis")] = excess_kurtosis(cos)
        noisy = split.meta.get("noisy")
        if isinstance(noisy, torch.Tensor) and len(noisy) == len(split):
            auroc = noise_auroc(cos, noisy[idx])
            if auroc == auroc:  # defined only when both clean and corrupted labels are present
                out[(name, "gwa_noise_auroc")] = auroc
    return out
