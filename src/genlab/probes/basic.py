"""The probes every run wants: accuracy and loss per split, and the weight norm."""

from __future__ import annotations

import torch
from torch import nn

from genlab.errors import SpecError
from genlab.losses import correct, cross_entropy
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import NoParams


def require_class_labels(ctx: EvalContext, probe: str) -> None:
    """Refuse a regression task (exit 2): the probe compares predicted and true classes."""
    if ctx.data.info.kind == "regression":
        raise SpecError(
            f"probe {probe!r} needs class labels, got a regression task; use threshold_accuracy"
        )


@PROBES.register("accuracy")
def accuracy(model: nn.Module, ctx: EvalContext, params: NoParams) -> ProbeResult:
    """Share of examples predicted right, per split (sequences: every scored position right)."""
    require_class_labels(ctx, "accuracy")
    out = {}
    for name, split in ctx.splits.items():
        out[(name, "accuracy")] = correct(ctx.logits(name), split.y).float().mean().item()
    return out


@PROBES.register("loss")
def loss(model: nn.Module, ctx: EvalContext, params: NoParams) -> ProbeResult:
    """Mean cross-entropy per split."""
    require_class_labels(ctx, "loss")
    return {
        (name, "loss"): cross_entropy(ctx.logits(name), split.y).item()
        for name, split in ctx.splits.items()
    }


@PROBES.register("weight_norm", papers=(107, 20))
def weight_norm(model: nn.Module, ctx: EvalContext, params: NoParams) -> ProbeResult:
    """L2 norm of all parameters; it falls as weight decay drives grokking (Liu et al., #107) and
    grows without it on the way to softmax collapse (Prieto et al., #20)."""
    with torch.no_grad():
        sq = sum(p.detach().double().pow(2).sum() for p in model.parameters())
    return {("model", "weight_norm"): float(sq) ** 0.5}
