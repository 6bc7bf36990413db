"""How diffuse a model's picks are over each prompt's valid outcomes (catalogue #49, "Forcing
diffuse distributions out of language models", Zhang et al., COLM 2024).

For a task whose prompts list their valid outcomes (``info.extra["listed_outcomes"]``, e.g.
``diffuse_picks``), per split and averaged over prompts: ``kl``, ``KL(target || p)`` from the
uniform distribution over the listed outcomes to the model's softmax over every class (mass off
the valid set raises it); ``entropy``, the entropy (nats) of ``p`` renormalised over the valid set,
and ``norm_entropy``, that over ``log k``; ``coverage``, the expected share of the ``k`` valid
outcomes that ``n_samples`` samples from ``p`` hit (the paper's coverage@N, computed exactly
instead of by sampling); ``valid``, the mass on the valid set. Params: ``n_samples``.
"""

from __future__ import annotations

import math

import torch
from pydantic import Field

from genlab.errors import SpecError
from genlab.methods.diffuse import listed
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import Params


class DiffusenessParams(Params):
    """Params of ``diffuseness``."""

    n_samples: int = Field(10, ge=1, description="samples per prompt for coverage@N")


@PROBES.register(
    "diffuseness", DiffusenessParams, papers=(49,), family="comp", tiny={"n_samples": 4}
)
def diffuseness(model, ctx: EvalContext, params: DiffusenessParams) -> ProbeResult:
    """KL to the uniform target, entropy, coverage@N and valid mass over each prompt's listed
    outcomes, per split (#49)."""
    info = ctx.data.info
    if not info.extra.get("listed_outcomes"):
        raise SpecError(
            "probe diffuseness needs a task whose prompts list their valid outcomes "
            "(info.extra['listed_outcomes'], e.g. task diffuse_picks)"
        )
    out: ProbeResult = {}
    for name, split in ctx.splits.items():
        logp = torch.log_softmax(ctx.logits(name).double(), dim=-1)
        mask = listed(split.x, info.n_outputs)
        k = mask.sum(1).double()
        lp = logp.masked_fill(~mask, 0.0)
        kl = -torch.log(k) - (lp.sum(1) / k)  # sum_valid (1/k) (log(1/k) - log p)
        p = logp.exp() * mask
        valid = p.sum(1)
        q = p / valid[:, None]
        h = -(q * torch.log(q.clamp_min(1e-300))).sum(1)
        cover = ((1.0 - (1.0 - p) ** params.n_samples) * mask).sum(1) / k
        norm = h / torch.log(k).clamp_min(math.log(2))
        for metric, v in (
            ("kl", kl),
            ("entropy", h),
            ("norm_entropy", norm),
            ("coverage", cover),
            ("valid", valid),
        ):
            out[(name, metric)] = float(v.mean())
    return out
