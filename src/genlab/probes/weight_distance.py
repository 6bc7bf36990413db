"""``weight_distance``: the distance of the trained weights from their initialisation.

Hoffer, Hubara & Soudry ("Train longer, generalize better", NeurIPS 2017, catalogue #9) observe
that ``||w_t - w_0||`` grows logarithmically with the number of updates in the initial high
learning-rate phase ("ultra-slow diffusion", a random walk on a random landscape), which is why a
large-batch run, with fewer updates, ends closer to its initialisation. Reported on split
``model`` as ``weight_distance`` (all trainable parameters) and ``weight_distance_rel``
(divided by ``||w_0||``).

``w_0`` is rebuilt from the run's spec exactly as the engine builds it (same seed, same builder),
so a resumed run reports the same distances; outside the engine (no spec) it is the weights seen
at the first evaluation at step 0, else the probe reports NaN.
"""

from __future__ import annotations

import math
import weakref

import torch
from torch import Tensor, nn

from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import NoParams

_INIT: weakref.WeakKeyDictionary[nn.Module, dict[str, Tensor]] = weakref.WeakKeyDictionary()


def trainable(model: nn.Module) -> dict[str, Tensor]:
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def rebuild_init(model: nn.Module, ctx: EvalContext) -> dict[str, Tensor] | None:
    """The run's initial trainable weights, rebuilt from ``ctx.spec`` (global RNG untouched)."""
    from genlab.errors import GenlabError
    from genlab.methods import METHODS
    from genlab.models import MODELS

    spec = ctx.spec
    if spec is None:
        return None
    model_entry, method_entry = MODELS.get(spec.model.name), METHODS.get(spec.method.name)
    with torch.random.fork_rng():
        torch.manual_seed(spec.seed)
        try:
            fresh = model_entry.obj(
                model_entry.params.model_validate(spec.model.params), ctx.data.info
            )
        except GenlabError:  # e.g. a from_run parent outside the active store
            return None
        method = method_entry.obj(
            method_entry.params.model_validate(spec.method.params), ctx.data.info
        )
        fresh = method.wrap(fresh)
    init = trainable(fresh)
    now = dict(model.named_parameters())
    if init.keys() != {n for n, p in now.items() if p.requires_grad}:
        return None
    return {n: v.to(now[n].dtype) for n, v in init.items()}


@PROBES.register("weight_distance", NoParams, papers=(9,), family="training-regime")
def weight_distance(model: nn.Module, ctx: EvalContext, params: NoParams) -> ProbeResult:
    """``||w_t - w_0||`` over the trainable parameters, and relative to ``||w_0||`` (#9)."""
    init = _INIT.get(model)
    if init is None:
        init = rebuild_init(model, ctx)
        if init is None and ctx.step == 0:
            init = trainable(model)
        if init is not None:
            _INIT[model] = init
    if init is None:
        return {("model", "weight_distance"): math.nan, ("model", "weight_distance_rel"): math.nan}
    with torch.no_grad():
        sq = sum(
            (p.detach().double() - init[n].double()).pow(2).sum()
            for n, p in model.named_parameters()
            if n in init
        )
        ref = sum(v.double().pow(2).sum() for v in init.values())
    dist = float(sq) ** 0.5
    return {
        ("model", "weight_distance"): dist,
        ("model", "weight_distance_rel"): dist / max(float(ref) ** 0.5, 1e-12),
    }
