"""Multilayer perceptrons: on token inputs (embed, concatenate, MLP) or on dense inputs (flatten).

The token form is the MLP of the grokking literature (Liu et al., #107; Gromov-style one-hidden-layer
networks on modular arithmetic).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params


class Square(nn.Module):
    """x², the quadratic activation under which modular addition is solved in closed form."""

    def forward(self, x: Tensor) -> Tensor:
        return x * x


ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU, "tanh": nn.Tanh, "square": Square}


class MLPParams(Params):
    """Params of ``mlp``."""

    width: int = Field(256, ge=1)
    depth: int = Field(2, ge=1, description="number of hidden layers")
    activation: Literal["relu", "gelu", "tanh", "square"] = "relu"
    embed_dim: int = Field(128, ge=1, description="token embedding size (token tasks only)")
    dropout: float = Field(0.0, ge=0, lt=1)


class MLP(nn.Module):
    """``[embed + flatten | flatten] -> (linear, activation, dropout) * depth -> linear``."""

    def __init__(self, p: MLPParams, info: TaskInfo) -> None:
        super().__init__()
        if info.kind != "classification":
            raise ValueError("the mlp model handles classification tasks only")
        if info.vocab_size is not None:
            self.embed: nn.Module = nn.Embedding(info.vocab_size, p.embed_dim)
            d_in = p.embed_dim * (info.seq_len or 1)
        else:
            self.embed = nn.Identity()
            d_in = math.prod(info.input_shape)
        layers: list[nn.Module] = []
        for _ in range(p.depth):
            layers += [nn.Linear(d_in, p.width), ACTIVATIONS[p.activation](), nn.Dropout(p.dropout)]
            d_in = p.width
        layers.append(nn.Linear(d_in, info.n_outputs))
        self.net = nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        return self.net(self.embed(x).flatten(1))


@MODELS.register("mlp", MLPParams, papers=(107,), tiny={"width": 16, "embed_dim": 8})
def mlp(params: MLPParams, info: TaskInfo) -> nn.Module:
    """Multilayer perceptron on token or dense inputs."""
    return MLP(params, info)
