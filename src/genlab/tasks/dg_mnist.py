"""``colored_mnist`` and ``rotated_mnist``: DomainBed's exact constructions on MNIST's IDX files.

Gulrajani & Lopez-Paz (DomainBed, 2021): train and test sets are pooled and shuffled (here by
``data_seed``) and dealt into environments. ColoredMNIST colors as in ``colored_digits``
(environments +90%, +80%, -90%) at 28x28, as DomainBed's code does (its 2x subsampling line is
commented out; Arjovsky et al.'s IRM code used 14x14, offered as ``resolution=14``); ``grayscale``
and ``color_flip`` as in ``colored_digits``. RotatedMNIST rotates 28x28 images by 0, 15, 30, 45,
60, 75 degrees. The files are read from ``data_root`` (see ``genlab.datasets.idx``); nothing is
downloaded. DomainBed's own architecture for both is the ``mnist_cnn`` model.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field, field_validator

from genlab.data import TaskData, TaskInfo
from genlab.datasets.domains import check_test_envs, domain_task, shuffled_parts
from genlab.datasets.idx import load_mnist, write_fake_mnist
from genlab.registry import Params
from genlab.tasks import TASKS
from genlab.tasks.dg_colored import ENV_FLIP, check_flips, color_dataset
from genlab.tasks.dg_colored import ENV_NAMES as COLOR_ENVS
from genlab.tasks.dg_rotated import ANGLES, rotate
from genlab.tasks.dg_rotated import ENV_NAMES as ROTATION_ENVS


class MNISTDomainParams(Params):
    """Params of ``colored_mnist`` / ``rotated_mnist``."""

    data_root: str = Field(description="folder with MNIST's IDX files (or its MNIST/raw)")
    test_envs: list[int] = Field(default_factory=lambda: [0], description="held-out env indices")
    limit: int | None = Field(None, ge=1, description="use only the first N shuffled images")
    holdout_fraction: float = Field(0.2, gt=0, lt=1)


class ColoredMNISTParams(MNISTDomainParams):
    resolution: Literal[28, 14] = Field(28, description="28 (DomainBed's code) or 14 (IRM's)")
    grayscale: bool = Field(False, description="digit in both channels: no color, same split")
    color_flip: list[float] = Field(
        default_factory=lambda: list(ENV_FLIP),
        min_length=3,
        max_length=3,
        description="P(color != label) per env",
    )

    @field_validator("test_envs")
    @classmethod
    def _envs(cls, v: list[int]) -> list[int]:
        return check_test_envs(v, len(COLOR_ENVS), COLOR_ENVS)

    _flips = field_validator("color_flip")(lambda v: check_flips(v))


class RotatedMNISTParams(MNISTDomainParams):
    @field_validator("test_envs")
    @classmethod
    def _envs(cls, v: list[int]) -> list[int]:
        return check_test_envs(v, len(ROTATION_ENVS), ROTATION_ENVS)


def _shuffled(params: MNISTDomainParams, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    x, y = load_mnist(params.data_root)
    order = torch.randperm(len(y), generator=gen)[: params.limit]
    return x[order].float().div(255).unsqueeze(1), y[order]


@TASKS.register(
    "colored_mnist",
    ColoredMNISTParams,
    family="domain-shift",
    tiny=lambda root: {"data_root": str(write_fake_mnist(root))},
)
def colored_mnist(params: ColoredMNISTParams, data_seed: int) -> TaskData:
    """DomainBed's ColoredMNIST from IDX files: 2x28x28 (or 14x14), binary label, 25% noise."""
    gen = torch.Generator().manual_seed(data_seed)
    x, y = _shuffled(params, gen)
    step = 28 // params.resolution
    x = x[:, :, ::step, ::step]
    envs = {}
    for i, (name, flip) in enumerate(zip(COLOR_ENVS, params.color_flip, strict=True)):
        envs[name] = color_dataset(x[i::3], y[i::3], flip, 0.25, gen, params.grayscale)
    size = params.resolution
    info = TaskInfo(kind="classification", n_outputs=2, input_shape=(2, size, size), chance=0.5)
    return domain_task(envs, params.test_envs, info, gen, params.holdout_fraction)


@TASKS.register(
    "rotated_mnist",
    RotatedMNISTParams,
    family="domain-shift",
    tiny=lambda root: {"data_root": str(write_fake_mnist(root))},
)
def rotated_mnist(params: RotatedMNISTParams, data_seed: int) -> TaskData:
    """DomainBed's RotatedMNIST from IDX files: 1x28x28, ten classes, six rotations."""
    gen = torch.Generator().manual_seed(data_seed)
    x, y = _shuffled(params, gen)
    parts = shuffled_parts(len(y), len(ANGLES), gen)
    envs = {
        n: (rotate(x[i], a), y[i]) for n, a, i in zip(ROTATION_ENVS, ANGLES, parts, strict=True)
    }
    info = TaskInfo(kind="classification", n_outputs=10, input_shape=(1, 28, 28), chance=0.1)
    return domain_task(envs, params.test_envs, info, gen, params.holdout_fraction)
