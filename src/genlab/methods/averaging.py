"""``swa`` and ``ema``: a running average of the weights along training, evaluated instead of them.

Stochastic weight averaging (Izmailov et al., "Averaging Weights Leads to Wider Optima and Better
Generalization", UAI 2018) keeps the plain mean of the weights every ``every`` steps from step
``start`` on; an exponential moving average keeps ``avg = decay * avg + (1 - decay) * w`` (Polyak &
Juditsky 1992; the EMA of the weights as in Tarvainen & Valpola 2017). Both are the in-training
members of the weight-averaging family of cluster C5 (catalogue #16, #102). The loss is ERM's.

The model is wrapped: training uses the live weights, evaluation the average (the live weights
until the first average exists). Floating buffers (BatchNorm statistics) are averaged like the
weights, so no extra pass over the data is needed; ``genlab.weights.ops.recompute_bn`` re-estimates
them exactly. Checkpoints hold both, so a resumed run continues the same average;
``plain_state`` gives the average to the weight-space tools (``genlab soup``, ``from_run``).
"""

from __future__ import annotations

import copy

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.methods import METHODS
from genlab.methods.base import Batch
from genlab.methods.erm import ERM, ERMParams


class SWAParams(ERMParams):
    """Params of ``swa``."""

    start: int = Field(0, ge=0, description="first step averaged")
    every: int = Field(1, ge=1, description="average every k steps")


class EMAParams(ERMParams):
    """Params of ``ema``."""

    decay: float = Field(0.999, gt=0, lt=1)
    start: int = Field(0, ge=0, description="first step averaged (the average starts as a copy)")


def as_buffers(model: nn.Module) -> nn.Module:
    """``model`` with every parameter turned into a buffer of the same name: the average is not
    trained, so it is neither given to the optimiser nor counted among the run's parameters."""
    for mod in model.modules():
        for name, p in list(mod._parameters.items()):
            del mod._parameters[name]
            mod.register_buffer(name, None if p is None else p.detach())
    return model


class Averaged(nn.Module):
    """The live ``model`` and its ``average``; ``forward`` uses the average outside training."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model
        self.average = as_buffers(copy.deepcopy(model))
        self.register_buffer("n_averaged", torch.zeros((), dtype=torch.long))
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))

    def forward(self, x: Tensor) -> Tensor:
        if self.training or int(self.n_averaged) == 0:
            return self.model(x)
        return self.average(x)

    @torch.no_grad()
    def update(self, decay: float | None) -> None:
        """Fold the live weights in: the running mean (``decay=None``) or an EMA step."""
        n = int(self.n_averaged)
        live = dict(self.model.state_dict())
        for name, avg in self.average.state_dict().items():
            if not avg.is_floating_point():
                avg.copy_(live[name])
            elif n == 0:
                avg.copy_(live[name])
            elif decay is None:
                avg.add_((live[name] - avg) / (n + 1))
            else:
                avg.lerp_(live[name], 1 - decay)
        self.n_averaged += 1


class WeightAveraging(ERM):
    """ERM whose evaluated model is a running average of the weights (SWA or EMA)."""

    decay: float | None = None

    def wrap(self, model: nn.Module) -> nn.Module:
        return Averaged(model)

    def step(
        self, model: nn.Module, optimizer: torch.optim.Optimizer, batches: dict[str, Batch]
    ) -> dict[str, float]:
        logs = super().step(model, optimizer, batches)
        model.steps += 1
        step = int(model.steps)
        if step >= self.params.start and self._due(step):
            model.update(self.decay)
        return logs

    def _due(self, step: int) -> bool:
        return True

    @staticmethod
    def plain_state(state: dict[str, Tensor]) -> dict[str, Tensor]:
        """The averaged weights (the live ones if nothing was averaged yet)."""
        prefix = "average." if int(state["n_averaged"]) > 0 else "model."
        return {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}


@METHODS.register("swa", SWAParams, family="ensembles")
class SWA(WeightAveraging):
    """Stochastic weight averaging: the mean of the weights every ``every`` steps from ``start``."""

    def _due(self, step: int) -> bool:
        return (step - self.params.start) % self.params.every == 0


@METHODS.register("ema", EMAParams, family="ensembles")
class EMA(WeightAveraging):
    """Exponential moving average of the weights, ``avg <- decay avg + (1 - decay) w``."""

    def __init__(self, params: EMAParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        self.decay = params.decay
