"""A small CNN for digit-sized images, with BatchNorm or IBN-a (instance-batch) normalisation.

IBN-a (Pan et al., IBN-Net, #7): in the shallow blocks, half of each normalisation's channels use
InstanceNorm (removing per-image appearance: contrast, brightness, tint) and the rest BatchNorm
(keeping content). The model exposes ``featurize`` (pooled penultimate features), ``classifier``
(the last linear layer) and ``block_features`` (pooled output of every block, for layer probes,
Uselis & Oh #103), which the domain-generalization methods use.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params


class CNNParams(Params):
    """Params of ``cnn``."""

    channels: list[int] = Field(
        default_factory=lambda: [32, 64, 64],
        min_length=1,
        description="output channels of each conv block",
    )
    norm: Literal["bn", "ibn_a", "in", "none"] = Field("bn", description="normalisation layers")
    ibn_blocks: int = Field(2, ge=0, description="IBN-a: number of shallow blocks that get IN")
    ibn_ratio: float = Field(0.5, gt=0, lt=1, description="IBN-a: share of channels with IN")
    pool_every: int = Field(2, ge=1, description="2x2 max-pool after every k-th block")


class IBN(nn.Module):
    """Instance norm on the first ``ratio`` of the channels, batch norm on the rest (IBN-a, #7)."""

    def __init__(self, channels: int, ratio: float = 0.5) -> None:
        super().__init__()
        self.n_in = max(1, int(channels * ratio))
        self.inorm = nn.InstanceNorm2d(self.n_in, affine=True)
        self.bnorm = nn.BatchNorm2d(channels - self.n_in)

    def forward(self, x: Tensor) -> Tensor:
        a, b = torch.split(x, [self.n_in, x.shape[1] - self.n_in], dim=1)
        return torch.cat([self.inorm(a.contiguous()), self.bnorm(b.contiguous())], dim=1)


def _norm(p: CNNParams, block: int, c: int) -> nn.Module:
    if p.norm == "bn" or (p.norm == "ibn_a" and block >= p.ibn_blocks):
        return nn.BatchNorm2d(c)
    if p.norm == "ibn_a":
        return IBN(c, p.ibn_ratio)
    if p.norm == "in":
        return nn.InstanceNorm2d(c, affine=True)
    return nn.Identity()


class PooledBlocks(nn.Module):
    """Convolutional ``blocks``, the mean over positions, then a linear ``classifier``: the
    interface the feature-based methods and the layer probes read (shared by ``cnn`` and
    ``mnist_cnn``)."""

    blocks: nn.ModuleList
    classifier: nn.Linear

    def block_features(self, x: Tensor) -> list[Tensor]:
        """The globally average-pooled output of every block, shallow to deep."""
        out = []
        for block in self.blocks:
            x = block(x)
            out.append(x.mean(dim=(2, 3)))
        return out

    def featurize(self, x: Tensor) -> Tensor:
        for block in self.blocks:
            x = block(x)
        return x.mean(dim=(2, 3))

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.featurize(x))


class CNN(PooledBlocks):
    """``[conv3x3 -> norm -> ReLU (-> maxpool)] * blocks -> global average pool -> linear``."""

    def __init__(self, p: CNNParams, info: TaskInfo) -> None:
        super().__init__()
        if info.kind != "classification" or len(info.input_shape) != 3:
            raise ValueError("the cnn model needs a classification task with (C, H, W) images")
        c_in, h, _ = info.input_shape
        blocks = []
        for i, c in enumerate(p.channels):
            layers: list[nn.Module] = [nn.Conv2d(c_in, c, 3, padding=1), _norm(p, i, c), nn.ReLU()]
            if (i + 1) % p.pool_every == 0 and h >= 2:
                layers.append(nn.MaxPool2d(2))
                h = math.floor(h / 2)
            blocks.append(nn.Sequential(*layers))
            c_in = c
        self.blocks = nn.ModuleList(blocks)
        self.n_features = c_in
        self.classifier = nn.Linear(c_in, info.n_outputs)


@MODELS.register(
    "cnn",
    CNNParams,
    papers=(7, 103),
    family="domain-shift",
    tiny={"channels": [4], "pool_every": 1},
)
def cnn(params: CNNParams, info: TaskInfo) -> nn.Module:
    """Small CNN with BatchNorm or IBN-a layers (Pan et al., IBN-Net, #7)."""
    return CNN(params, info)
