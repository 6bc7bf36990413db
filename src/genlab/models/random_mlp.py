"""The random MLP of "Neural Redshift" (Teney et al., CVPR 2024, #85) as a model: ``depth``
blocks ``h <- [h +] act(W [LN](h) + b)`` with weights and biases ~ N(0, scale² / fan_in)
(``genlab.models.random_net.Arch``), drawn from the run's seed. Built to be measured at
initialisation (the claims read step 0); it trains like any MLP."""

from __future__ import annotations

import math

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.models.random_net import Activation, Arch, RandomNet
from genlab.registry import Params


class RandomMLPParams(Params):
    """Params of ``random_mlp``."""

    activation: Activation = "relu"
    depth: int = Field(4, ge=1, le=32)
    width: int = Field(64, ge=1, le=4096)
    residual: bool = False
    layer_norm: bool = False
    scale: float = Field(1.0, gt=0, le=64, description="weight std * sqrt(fan_in)")


class _Flat(nn.Module):
    def __init__(self, net: RandomNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x.flatten(1))


@MODELS.register("random_mlp", RandomMLPParams, papers=(85,), tiny={"width": 8, "depth": 2})
def random_mlp(params: RandomMLPParams, info: TaskInfo) -> nn.Module:
    """Random-weight MLP with a chosen activation, residuals, layer norm and weight scale (#85)."""
    if info.vocab_size is not None or not info.input_shape or info.kind != "classification":
        raise ValueError("random_mlp needs a dense-input classification task")
    gen = torch.Generator().manual_seed(int(torch.randint(0, 2**62, (1,))))
    arch = Arch(**params.model_dump())
    net = RandomNet(arch, math.prod(info.input_shape), gen, info.n_outputs)
    return _Flat(net).float()
