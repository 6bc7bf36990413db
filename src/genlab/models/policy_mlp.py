"""``policy_mlp``: a small multilayer perceptron from a flat observation to a continuous action, the
behaviour-cloning policy of the point-mass reaching proxy of MOVE (#4): ``depth`` tanh hidden
layers of ``width`` units and a linear output (4 -> 64 -> 64 -> 2: 4,546 parameters)."""

from __future__ import annotations

import math

from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params


class PolicyMLPParams(Params):
    """Params of ``policy_mlp``."""

    width: int = Field(64, ge=1, le=4096, description="units of each hidden layer")
    depth: int = Field(2, ge=1, le=16, description="hidden layers")


class PolicyMLP(nn.Module):
    """``(linear, tanh) * depth -> linear`` on the flattened observation."""

    def __init__(self, p: PolicyMLPParams, d_in: int, d_out: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for _ in range(p.depth):
            layers += [nn.Linear(d_in, p.width), nn.Tanh()]
            d_in = p.width
        layers.append(nn.Linear(d_in, d_out))
        self.net = nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x.flatten(1))


@MODELS.register(
    "policy_mlp", PolicyMLPParams, papers=(4,), family="control", tiny={"width": 8, "depth": 1}
)
def policy_mlp(params: PolicyMLPParams, info: TaskInfo) -> nn.Module:
    """Tanh MLP policy from observations to continuous actions (#4)."""
    if info.kind != "regression" or not info.input_shape or info.vocab_size is not None:
        raise ValueError(
            "policy_mlp maps dense observations to real-valued actions (a "
            "regression task such as point_reach)"
        )
    return PolicyMLP(params, math.prod(info.input_shape), info.n_outputs)
