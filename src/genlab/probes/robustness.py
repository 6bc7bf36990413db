"""``pgd_accuracy``: accuracy under an L-infinity PGD attack (Madry et al. 2018), the robust
test accuracy by which Lee et al. judge adversarial training with OOD data (OAT, #6)."""

from __future__ import annotations

import torch
from pydantic import Field
from torch import nn

from genlab.attacks import linf_pgd
from genlab.errors import SpecError
from genlab.losses import correct, cross_entropy
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import Params


class PGDParams(Params):
    """Params of ``pgd_accuracy``."""

    eps: float = Field(0.1, gt=0, le=1, description="L-inf radius (inputs in [0, 1])")
    steps: int = Field(10, ge=1, le=200, description="PGD steps")
    roles: list[str] = Field(
        default_factory=lambda: ["test"],
        min_length=1,
        description="split roles attacked (train, val, test)",
    )
    max_samples: int = Field(512, ge=1, description="examples attacked per split (the first)")


@PROBES.register("pgd_accuracy", PGDParams, papers=(6,))
def pgd_accuracy(model: nn.Module, ctx: EvalContext, params: PGDParams) -> ProbeResult:
    """Share of examples still classified right after a PGD attack, per attacked split (#6)."""
    if ctx.data.info.kind != "classification" or len(ctx.data.info.input_shape) < 1:
        raise SpecError("probe 'pgd_accuracy' needs a classification task with dense inputs")
    gen = torch.Generator().manual_seed(10_007 + ctx.step)
    was_training = model.training
    model.eval()
    out = {}
    try:
        for name, split in ctx.splits.items():
            if name.split("/", 1)[0] not in params.roles:
                continue
            x, y = split.x[: params.max_samples], split.y[: params.max_samples]
            adv = linf_pgd(
                model, x, lambda z, y=y: cross_entropy(z, y), params.eps, params.steps, gen=gen
            )
            with torch.no_grad():
                out[(name, "pgd_accuracy")] = correct(model(adv), y).float().mean().item()
    finally:
        model.train(was_training)
    return out
