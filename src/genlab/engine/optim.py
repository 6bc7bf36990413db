"""Optimisers and the warm-up schedule from an ``OptimizerSpec``."""

from __future__ import annotations

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
    optimizer: torch.optim.Optimizer, spec: OptimizerSpec
) -> torch.optim.lr_scheduler.LambdaLR:
    """Linear warm-up over ``warmup_steps``, then constant (Power et al. warm up for 10 steps)."""
    warm = spec.warmup_steps
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warm) if warm else 1.0
    )
