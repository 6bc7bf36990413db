"""``rotated_digits``: DomainBed's RotatedMNIST construction on scikit-learn's 8x8 digits.

Ghifary et al. (2015) as coded in DomainBed (Gulrajani & Lopez-Paz, 2021): the digits are shuffled
and dealt into six disjoint environments, each rotated by 0, 15, 30, 45, 60 or 75 degrees; ten
classes. Rotation is bilinear (``torch.nn.functional.grid_sample``), optionally after upsampling.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from pydantic import Field, field_validator

from genlab.data import TaskData, TaskInfo
from genlab.datasets.digits import load_digits_tensors
from genlab.datasets.domains import check_test_envs, domain_task, shuffled_parts
from genlab.registry import Params
from genlab.tasks import TASKS

ANGLES = (0, 15, 30, 45, 60, 75)
ENV_NAMES = tuple(f"{a}deg" for a in ANGLES)


class RotatedDigitsParams(Params):
    """Params of ``rotated_digits``."""

    quiet_defaults: ClassVar[dict[str, Any]] = {"test_holdout": False}  # earlier run ids stay

    test_envs: list[int] = Field(
        default_factory=lambda: [5], description="held-out env indices 0..5 (0, 15, ..., 75 deg)"
    )
    size: int = Field(8, ge=8, le=32, description="image side after (bilinear) upsampling")
    holdout_fraction: float = Field(0.2, gt=0, lt=1, description="share of each env for val")
    test_holdout: bool = Field(
        False,
        description="split held-out envs too: test/<env> their 80% in part, test/<env>:out the "
        "20% out part (DomainBed's oracle selects on out, reports in)",
    )

    @field_validator("test_envs")
    @classmethod
    def _envs(cls, v: list[int]) -> list[int]:
        return check_test_envs(v, len(ENV_NAMES), ENV_NAMES)


def rotate(images: torch.Tensor, degrees: float) -> torch.Tensor:
    """Rotate ``(N, C, H, W)`` images counter-clockwise about their centre, zeros outside."""
    t = math.radians(degrees)
    theta = torch.tensor([[math.cos(t), -math.sin(t), 0.0], [math.sin(t), math.cos(t), 0.0]])
    grid = F.affine_grid(theta.expand(len(images), 2, 3), list(images.shape), align_corners=False)
    return F.grid_sample(images, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


@TASKS.register("rotated_digits", RotatedDigitsParams, papers=(), family="domain-shift")
def rotated_digits(params: RotatedDigitsParams, data_seed: int) -> TaskData:
    """Six rotation environments of ten-class digits (RotatedMNIST on sklearn digits).

    Params: ``test_envs`` (held out whole), ``size`` (8), ``holdout_fraction`` (0.2), ``test_holdout`` (False).
    """
    images, digits = load_digits_tensors()
    if params.size != 8:
        images = F.interpolate(images, size=params.size, mode="bilinear", align_corners=False)
    gen = torch.Generator().manual_seed(data_seed)
    parts = shuffled_parts(len(images), len(ANGLES), gen)
    envs = {
        n: (rotate(images[i], a), digits[i])
        for n, a, i in zip(ENV_NAMES, ANGLES, parts, strict=True)
    }
    info = TaskInfo(
        kind="classification", n_outputs=10, input_shape=(1, params.size, params.size), chance=0.1
    )
    return domain_task(
        envs,
        params.test_envs,
        info,
        gen,
        params.holdout_fraction,
        {"task": "rotated_digits"},
        params.test_holdout,
    )
