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


class OneHotMLPParams(Params):
    """Params of ``mlp_onehot``."""

    width: int = Field(200, ge=1)
    depth: int = Field(2, ge=1, description="number of hidden layers")
    bias: bool = Field(False, description="biases in every linear layer")
    tokens: int | None = Field(
        None,
        ge=1,
        description="use only the first `tokens` tokens (e.g. 2: the operands of "
        "`a b =`); None: all of them",
    )


class OneHotMLP(nn.Module):
    """``one-hot(tokens) concatenated -> (linear, ReLU) * depth -> linear``: no learned embedding
    table, so the first layer is a sum of per-position columns on the scale of a default
    ``nn.Linear`` (Prieto et al.'s MLP, #20, with ``bias=False``)."""

    def __init__(self, p: OneHotMLPParams, info: TaskInfo) -> None:
        super().__init__()
        if info.kind != "classification":
            raise ValueError("the mlp_onehot model handles classification tasks only")
        self.vocab = info.vocab_size
        if self.vocab is not None:
            self.tokens = min(p.tokens or info.seq_len or 1, info.seq_len or 1)
            d_in = self.vocab * self.tokens
        else:
            self.tokens = None
            d_in = math.prod(info.input_shape)
        layers: list[nn.Module] = []
        for _ in range(p.depth):
            layers += [nn.Linear(d_in, p.width, bias=p.bias), nn.ReLU()]
            d_in = p.width
        layers.append(nn.Linear(d_in, info.n_outputs, bias=p.bias))
        self.net = nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        if self.vocab is not None:
            x = nn.functional.one_hot(x[:, : self.tokens], self.vocab)
            x = x.to(self.net[0].weight.dtype)
        return self.net(x.flatten(1))


@MODELS.register("mlp_onehot", OneHotMLPParams, papers=(20,), tiny={"width": 16})
def mlp_onehot(params: OneHotMLPParams, info: TaskInfo) -> nn.Module:
    """MLP on concatenated one-hot tokens, bias-free by default (Prieto et al., #20)."""
    return OneHotMLP(params, info)
