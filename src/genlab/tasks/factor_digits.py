"""``factor_digits``: one factor of variation at a time, and in pairs (catalogue #40, Factor World:
Xie et al. 2023, "Decomposing the generalization gap in visual imitation learning").

scikit-learn's 8x8 digits, upsampled to 12x12 and centred on a 16x16 canvas. Training and
validation images are unchanged; each test split applies one factor (``rotate``, ``translate``,
``scale``, ``noise``, ``contrast``) or a pair of them to a random half of the held-out digits (the
half differs per split, so two splits never hold exactly the same images). ``magnitude`` scales
every factor (0: the test splits are clean images). ``test/clean`` is the held-out digits
unchanged: the gap of a split is ``clean`` minus its accuracy.
"""

from __future__ import annotations

import itertools
import math

import torch
import torch.nn.functional as F
from pydantic import Field

from genlab.data import Split, TaskData, TaskInfo
from genlab.datasets.digits import load_digits_tensors
from genlab.registry import Params
from genlab.tasks import TASKS

FACTORS = ("rotate", "translate", "scale", "noise", "contrast")


class FactorParams(Params):
    """Params of ``factor_digits``."""

    magnitude: float = Field(1.0, ge=0, le=2, description="strength of every factor (0: none)")
    pairs: bool = Field(True, description="also test every pair of factors")
    test_fraction: float = Field(0.3, gt=0, lt=1, description="share of digits held out")


def _affine(x: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def apply(x: torch.Tensor, factor: str, m: float, gen: torch.Generator) -> torch.Tensor:
    """``factor`` at magnitude ``m`` on images ``(n, 1, 16, 16)``; each image draws its own sign or
    direction. Full magnitude: +-40 degrees, 3 pixels, x0.6 or x1.4 size, noise std 0.35,
    contrast x0.35."""
    n = len(x)
    sign = torch.randint(0, 2, (n,), generator=gen).float() * 2 - 1
    eye = torch.eye(2, 3).repeat(n, 1, 1)
    if factor == "rotate":
        a = sign * math.radians(40 * m)
        eye[:, 0, 0], eye[:, 0, 1], eye[:, 1, 0], eye[:, 1, 1] = a.cos(), -a.sin(), a.sin(), a.cos()
        return _affine(x, eye)
    if factor == "translate":
        angle = torch.rand(n, generator=gen) * 2 * math.pi
        eye[:, 0, 2], eye[:, 1, 2] = angle.cos() * 3 * m / 8, angle.sin() * 3 * m / 8  # 1 px = 1/8
        return _affine(x, eye)
    if factor == "scale":
        s = 1 + 0.4 * m * sign
        eye[:, 0, 0], eye[:, 1, 1] = 1 / s, 1 / s
        return _affine(x, eye)
    if factor == "noise":
        return x + 0.35 * m * torch.randn(x.shape, generator=gen)
    if factor == "contrast":
        return x * (1 - 0.65 * m)
    raise ValueError(f"factor must be one of {', '.join(FACTORS)}, got {factor!r}")


def conditions(pairs: bool) -> list[tuple[str, ...]]:
    """The test conditions: every factor alone, then (``pairs``) every pair."""
    singles = [(f,) for f in FACTORS]
    return singles + (list(itertools.combinations(FACTORS, 2)) if pairs else [])


@TASKS.register(
    "factor_digits",
    FactorParams,
    papers=(40,),
    family="domain-shift",
    tiny={"pairs": False, "test_fraction": 0.04},
)
def factor_digits(params: FactorParams, data_seed: int) -> TaskData:
    """Clean training digits; a test split per factor and per pair of factors (#40)."""
    images, y = load_digits_tensors()
    x = F.pad(F.interpolate(images, size=(12, 12), mode="bilinear", align_corners=False), [2] * 4)
    gen = torch.Generator().manual_seed(data_seed)
    order = torch.randperm(len(x), generator=gen)
    k = round(params.test_fraction * len(x))
    held, rest = order[:k], order[k:]
    val, train = rest[: len(rest) // 6], rest[len(rest) // 6 :]
    test = {"clean": Split(x[held], y[held], {"env": "clean"})}
    for cond in conditions(params.pairs):
        half = held[torch.randperm(k, generator=gen)[: k // 2]]
        xs = x[half]
        for f in cond:
            xs = apply(xs, f, params.magnitude, gen)
        name = "+".join(cond)
        test[name] = Split(xs, y[half], {"env": name, "factors": list(cond)})
    info = TaskInfo(
        kind="classification",
        n_outputs=10,
        input_shape=(1, 16, 16),
        chance=0.1,
        extra={"envs": ["train"], "train_envs": ["train"], "test_envs": list(test)},
    )
    return TaskData(
        {"train": Split(x[train], y[train], {"env": "train"})},
        {"train": Split(x[val], y[val], {"env": "train"})},
        test,
        info,
    )
