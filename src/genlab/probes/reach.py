"""``reach_success``: the success rate of a policy rolled out in the point-mass reaching environment
(``genlab.datasets.point_reach``), the metric of the MOVE proxy (#4).

Every split marked ``meta["episodes"]`` holds episodes to play: ``x`` their initial observations
``(p, g)`` (static targets). The model is the policy (its output, clipped to ``[-1, 1]²``, is the
action); an episode succeeds if the agent comes within ``radius`` of the target in at most
``horizon`` steps, both read from ``TaskInfo.extra["point_reach"]``. Logs ``success`` per such
split. Deterministic: the dynamics and the episodes have no noise.
"""

from __future__ import annotations

import torch
from torch import nn

from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import NoParams


@PROBES.register("reach_success", NoParams, papers=(4,), family="control")
def reach_success(model: nn.Module, ctx: EvalContext, params: NoParams) -> ProbeResult:
    """Success rate of the policy on each split of reaching episodes (#4)."""
    env = ctx.data.info.extra.get("point_reach")
    if not env:
        raise SpecError("probe 'reach_success' needs a task of reaching episodes (point_reach)")
    from genlab.datasets.point_reach import rollout

    was_training = model.training
    model.eval()
    out: ProbeResult = {}
    try:
        with torch.inference_mode():
            for name, split in ctx.splits.items():
                if split.meta.get("episodes"):
                    ok = rollout(model, split.x, int(env["horizon"]), float(env["radius"]))
                    out[(name, "success")] = ok.mean().item()
    finally:
        model.train(was_training)
    return out
