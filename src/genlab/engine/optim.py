"""Optimisers and the learning-rate schedule (warm-up, then constant or cosine) from an
``OptimizerSpec``."""

from __future__ import annotations

import math

import torch
from torch import nn

from genlab.spec import OptimizerSpec


def build_optimizer(model: nn.Module, spec: OptimizerSpec) -> torch.optim.Optimizer:
    params = [p for p in model.parameters() if p.requires_grad]
    if spec.name == "sgd":
        return torch.optim.SGD(
            params, lr=spec.lr, momentum=spec.momentum, weight_decay=spec.weight_decay
        )
    cls = torch.optim.AdamW if spec.name == "adamw" else torch.optim.Adam
    return cls(params, lr=spec.lr, betas=spec.betas, eps=spec.eps, weight_decay=spec.weight_decay)


def build_scheduler(
    optimizer: torch.optim.Optimizer, spec: OptimizerSpec, steps: int
) -> torch.optim.lr_scheduler.LambdaLR:
    """Linear warm-up over ``warmup_steps`` (Power et al. warm up for 10 steps), then constant, or
    with ``decay="cosine"`` half a cosine from the full rate to 0 at step ``steps``."""
    warm, cosine = spec.warmup_steps, spec.decay == "cosine"

    def factor(s: int) -> float:  # LambdaLR: step s + 1 trains at lr * factor(s)
        if s < warm:
            return (s + 1) / warm
        if not cosine:
            return 1.0
        return 0.5 * (1.0 + math.cos(math.pi * min(1.0, (s - warm) / max(1, steps - warm))))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
