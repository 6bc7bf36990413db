"""DomainBed's ``MNIST_CNN``: the featurizer Gulrajani & Lopez-Paz (DomainBed, 2021) train on
ColoredMNIST and RotatedMNIST, with DomainBed's linear classifier on its 128 features.

Four 3x3 convolutions with 64, 128, 128, 128 channels (padding 1; the second with stride 2), each
followed by ReLU and then GroupNorm with 8 groups, then the mean over positions and one linear
layer, in DomainBed's order and PyTorch's default initialisation. ``channels`` changes the widths
(each a multiple of 8) for tiny checks; the default is DomainBed's. The model exposes ``blocks``,
``block_features``, ``featurize`` and ``classifier`` like ``cnn``, so the feature-based methods and
the layer probes (Uselis & Oh, #103) apply.
"""

from __future__ import annotations

from pydantic import Field, field_validator
from torch import nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.models.cnn import PooledBlocks
from genlab.registry import Params


class MNISTCNNParams(Params):
    """Params of ``mnist_cnn``."""

    channels: list[int] = Field(
        default_factory=lambda: [64, 128, 128, 128],
        min_length=4,
        max_length=4,
        description="widths of the four convolutions",
    )

    @field_validator("channels")
    @classmethod
    def _groups(cls, v: list[int]) -> list[int]:
        if any(c < 8 or c % 8 for c in v):
            raise ValueError(
                f"every channel count must be a positive multiple of 8 (GroupNorm "
                f"with 8 groups), got {v}"
            )
        return v


class MNISTCNN(PooledBlocks):
    """``[conv3x3 -> ReLU -> GroupNorm(8)] x 4 (the 2nd with stride 2) -> mean -> linear``."""

    def __init__(self, p: MNISTCNNParams, info: TaskInfo) -> None:
        super().__init__()
        if info.kind != "classification" or len(info.input_shape) != 3:
            raise ValueError(
                "the mnist_cnn model needs a classification task with (C, H, W) images"
            )
        c_in, blocks = info.input_shape[0], []
        for i, c in enumerate(p.channels):
            conv = nn.Conv2d(c_in, c, 3, stride=2 if i == 1 else 1, padding=1)
            blocks.append(nn.Sequential(conv, nn.ReLU(), nn.GroupNorm(8, c)))
            c_in = c
        self.blocks = nn.ModuleList(blocks)
        self.n_features = c_in
        self.classifier = nn.Linear(c_in, info.n_outputs)


@MODELS.register(
    "mnist_cnn", MNISTCNNParams, family="domain-shift", tiny={"channels": [8, 8, 8, 8]}
)
def mnist_cnn(params: MNISTCNNParams, info: TaskInfo) -> nn.Module:
    """DomainBed's MNIST_CNN featurizer with a linear classifier (Gulrajani & Lopez-Paz, 2021)."""
    return MNISTCNN(params, info)
