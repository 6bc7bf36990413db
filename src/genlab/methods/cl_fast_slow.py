"""``fast_slow``: a pair of fast and slow weights with a two-step consolidation, genlab's reading of
Wang et al. 2021, "Few-shot continual learning: a brain-inspired approach" (catalogue #95).

The abstract names the method's parts and no more: fast and slow weights "interdependently"
updated, and a "two-step consolidation" that learns the sequence without forgetting in the fast
weights and improves generalization without overfitting in the slow weights. The paper's full text
and code are not available offline, so this is a reading of those sentences, not the paper's
algorithm (its meta-learning schedule, learning rates and consolidation losses are unknown here):

- the **fast weights** are the model's parameters; on experience ``k`` they train on its few shots
  under EWC's penalty to every past experience's consolidated fast weights (Kirkpatrick et al.
  2017, Avalanche's ``separate`` mode, as ``ewc``);
- at the end of each experience, **step 1** consolidates the fast weights (their diagonal Fisher
  and an anchor, as EWC), **step 2** moves the **slow weights** a fraction ``slow_rate`` towards
  them, ``theta_s <- theta_s + slow_rate (theta_f - theta_s)`` (a Reptile-style outer step, Nichol
  et al. 2018: an average of the tasks' solutions rather than the last one);
- the next experience's fast weights **start from the slow weights** (the interdependence), so a
  new task is learned from the running average of past solutions instead of the last task's
  over-fitted one, while the penalty keeps the old tasks.

``slow_rate = 1`` makes the slow weights the last fast weights: the method is then exactly ``ewc``
(the ablation the claim ``cl.fast_slow`` measures against).
"""

from __future__ import annotations

from typing import Any

import torch
from pydantic import Field
from torch import nn

from genlab.data import TaskInfo
from genlab.methods import METHODS
from genlab.methods.cl_ewc import EWC, EWCParams


class FastSlowParams(EWCParams):
    """Params of ``fast_slow`` (the fast weights' consolidation is EWC's)."""

    slow_rate: float = Field(
        0.5, gt=0, le=1, description="step of the slow weights towards the fast ones (1: ewc)"
    )


@METHODS.register("fast_slow", FastSlowParams, papers=(95,), family="continual")
class FastSlow(EWC):
    """EWC-consolidated fast weights, restarted each experience from Reptile-averaged slow ones."""

    def __init__(self, params: FastSlowParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        self.slow: list[torch.Tensor] = []

    def before_experience(self, model: nn.Module, k: int) -> None:
        super().before_experience(model, k)  # step 1: the fast weights' Fisher and anchor
        fast = [p.detach() for p in model.parameters()]
        if not self.slow:
            self.slow = [p.clone() for p in fast]
            return
        with torch.no_grad():
            for s, f, p in zip(self.slow, fast, model.parameters(), strict=True):
                s.add_(f - s, alpha=self.params.slow_rate)  # step 2: the slow weights move
                p.copy_(s)  # the new experience's fast weights start from the slow ones

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "slow": self.slow}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.slow = list(state.get("slow", []))
