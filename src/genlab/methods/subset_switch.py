"""Train on the full training set, then continue on a subset of it: the protocol of "ungrokking"
(Varma et al., "Explaining grokking through circuit efficiency", 2023, catalogue #116).

After ``switch_step`` optimiser steps, each environment's batch keeps only its first ``keep``
examples. The task's training sets are already in a seeded random order, so with full-batch training
(``batch_size`` unset) this is a fixed random subset. The step count lives in a model buffer, so a
resumed run switches at the same step. Each step logs ``train_size`` (examples in the batch), so
the store shows where the switch happened (``optim/train_size``).
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field
from torch import nn

from genlab.methods import METHODS
from genlab.methods.base import Batch
from genlab.methods.erm import ERM
from genlab.registry import Params


class SubsetSwitchParams(Params):
    """Params of ``subset_switch``."""

    switch_step: int = Field(ge=0, description="steps on the full training set")
    keep: int = Field(ge=1, description="training examples kept per environment after the switch")
    loss: Literal["softmax", "stablemax"] = "softmax"


@METHODS.register(
    "subset_switch",
    SubsetSwitchParams,
    papers=(116,),
    family="grokking",
    tiny={"switch_step": 1, "keep": 8},
)
class SubsetSwitch(ERM):
    """ERM on the full training set for ``switch_step`` steps, then on its first ``keep`` examples
    (ungrokking, Varma et al., #116). Meant for full-batch training."""

    def wrap(self, model: nn.Module) -> nn.Module:
        model.register_buffer("subset_switch_step", torch.zeros((), dtype=torch.long))
        return model

    def step(
        self, model: nn.Module, optimizer: torch.optim.Optimizer, batches: dict[str, Batch]
    ) -> dict[str, float]:
        counter = model.get_buffer("subset_switch_step")
        if int(counter) >= self.params.switch_step:
            batches = {
                k: (x[: self.params.keep], y[: self.params.keep]) for k, (x, y) in batches.items()
            }
        counter += 1
        size = float(sum(len(x) for x, _ in batches.values()))
        return {**super().step(model, optimizer, batches), "train_size": size}
