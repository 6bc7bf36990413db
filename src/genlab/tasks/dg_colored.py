"""``colored_digits``: DomainBed's ColoredMNIST construction on scikit-learn's 8x8 digits.

Arjovsky et al. (IRM, 2019) as coded in DomainBed (Gulrajani & Lopez-Paz, 2021): the label is
``digit < 5`` flipped with probability 0.25; the color is the label flipped with probability ``e``
per environment (0.1, 0.2, 0.9, named ``+90%``, ``+80%``, ``-90%`` for how often color agrees with
the label); the image has two channels and the channel that is not the color is zeroed. Shape
predicts the label 75% of the time; color predicts it 90%, 80% or 10%.

Two variants on the same split and labels (the random draws are the same): ``grayscale=True`` keeps
the digit in both channels (no color: the shape-only limit of a model on that data), and
``color_flip`` sets each environment's flip probability (``[0.5, 0.5, 0.5]``: color carries
nothing about the label in any environment).
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from pydantic import Field, field_validator

from genlab.data import TaskData, TaskInfo
from genlab.datasets.digits import load_digits_tensors
from genlab.datasets.domains import check_test_envs, domain_task, shuffled_parts
from genlab.registry import Params
from genlab.tasks import TASKS

ENV_NAMES = ("+90%", "+80%", "-90%")
ENV_FLIP = (0.1, 0.2, 0.9)


class ColoredDigitsParams(Params):
    """Params of ``colored_digits``."""

    quiet_defaults: ClassVar[dict[str, Any]] = {"test_holdout": False}  # earlier run ids stay

    test_envs: list[int] = Field(
        default_factory=lambda: [2], description="held-out env indices: 0=+90%, 1=+80%, 2=-90%"
    )
    label_noise: float = Field(0.25, ge=0, le=0.5, description="label flip probability")
    holdout_fraction: float = Field(0.2, gt=0, lt=1, description="share of each env for val")
    test_holdout: bool = Field(
        False,
        description="split held-out envs too: test/<env> their 80% in part, test/<env>:out the "
        "20% out part (DomainBed's oracle selects on out, reports in)",
    )
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
        return check_test_envs(v, len(ENV_NAMES), ENV_NAMES)

    _flips = field_validator("color_flip")(lambda v: check_flips(v))


def check_flips(v: list[float]) -> list[float]:
    """Color flip probabilities must lie in [0, 1]."""
    if not all(0 <= f <= 1 for f in v):
        raise ValueError(f"color_flip values must lie in [0, 1], got {v}")
    return v


def color_dataset(
    images: torch.Tensor,
    digits: torch.Tensor,
    flip: float,
    noise: float,
    gen: torch.Generator,
    gray: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """DomainBed's ``color_dataset``: noisy binary label, color = label XOR Bernoulli(flip);
    ``gray`` keeps both channels (the color is drawn all the same, so the labels do not move)."""
    n = len(images)
    labels = (digits < 5).long() ^ (torch.rand(n, generator=gen) < noise).long()
    colors = labels ^ (torch.rand(n, generator=gen) < flip).long()
    x = images.expand(n, 2, *images.shape[2:]).clone()
    if not gray:
        x[torch.arange(n), 1 - colors] = 0.0
    return x, labels


@TASKS.register("colored_digits", ColoredDigitsParams, papers=(), family="domain-shift")
def colored_digits(params: ColoredDigitsParams, data_seed: int) -> TaskData:
    """Three color-biased environments of binary digits (ColoredMNIST on sklearn digits).

    Params: ``test_envs`` (held out whole), ``label_noise`` (0.25), ``holdout_fraction`` (0.2),
    ``test_holdout`` (False), ``grayscale`` (False), ``color_flip`` ([0.1, 0.2, 0.9]).
    """
    images, digits = load_digits_tensors()
    gen = torch.Generator().manual_seed(data_seed)
    envs = {}
    parts = shuffled_parts(len(images), 3, gen)
    for name, flip, idx in zip(ENV_NAMES, params.color_flip, parts, strict=True):
        envs[name] = color_dataset(
            images[idx], digits[idx], flip, params.label_noise, gen, params.grayscale
        )
    info = TaskInfo(kind="classification", n_outputs=2, input_shape=(2, 8, 8), chance=0.5)
    return domain_task(
        envs,
        params.test_envs,
        info,
        gen,
        params.holdout_fraction,
        {"task": "colored_digits"},
        params.test_holdout,
    )
