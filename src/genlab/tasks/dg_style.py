"""``style_digits``: environments of 8x8 RGB digits that differ in appearance only.

For the instance-normalization claims of IBN-Net (Pan et al., #7): the digits are dealt into five
disjoint environments rendered as ``clean`` (white on black), ``low_contrast`` (gray levels squeezed
into [0.35, 0.65]), ``tinted`` (random per-image channel gains and offsets), ``bright`` (shifted up,
clipped), and ``noisy`` (a random texture overlay, Gaussian noise of std 0.3). Content (the digit)
is the label; appearance changes with the environment. By default the model trains on ``clean`` and
every other environment is held out.
"""

from __future__ import annotations

import torch
from pydantic import Field, field_validator

from genlab.data import TaskData, TaskInfo
from genlab.datasets.digits import load_digits_tensors
from genlab.datasets.domains import check_test_envs, domain_task, shuffled_parts
from genlab.registry import Params
from genlab.tasks import TASKS

ENV_NAMES = ("clean", "low_contrast", "tinted", "bright", "noisy")


class StyleDigitsParams(Params):
    """Params of ``style_digits``."""

    test_envs: list[int] = Field(
        default_factory=lambda: [1, 2, 3, 4],
        description="held-out env indices: 0=clean 1=low_contrast 2=tinted 3=bright 4=noisy",
    )
    holdout_fraction: float = Field(0.2, gt=0, lt=1, description="share of each env for val")

    @field_validator("test_envs")
    @classmethod
    def _envs(cls, v: list[int]) -> list[int]:
        return check_test_envs(v, len(ENV_NAMES), ENV_NAMES)


def render(images: torch.Tensor, style: str, gen: torch.Generator) -> torch.Tensor:
    """``(N, 1, H, W)`` gray digits in [0, 1] to ``(N, 3, H, W)`` RGB in one appearance style."""
    x = images.expand(len(images), 3, *images.shape[2:]).clone()
    n = len(x)
    if style == "low_contrast":
        return 0.35 + 0.3 * x
    if style == "tinted":
        gain = 0.2 + 0.8 * torch.rand(n, 3, 1, 1, generator=gen)
        offset = 0.3 * torch.rand(n, 3, 1, 1, generator=gen)
        return x * gain + offset
    if style == "bright":
        return (x + 0.5).clamp(max=1.0) * 0.8 + 0.2
    if style == "noisy":
        return x + 0.3 * torch.randn(x.shape, generator=gen)
    return x


@TASKS.register("style_digits", StyleDigitsParams, papers=(7,), family="domain-shift")
def style_digits(params: StyleDigitsParams, data_seed: int) -> TaskData:
    """Five appearance environments of ten-class RGB digits (IBN-Net's setting, Pan et al., #7).

    Params: ``test_envs`` (default all but ``clean``), ``holdout_fraction`` (0.2).
    """
    images, digits = load_digits_tensors()
    gen = torch.Generator().manual_seed(data_seed)
    parts = shuffled_parts(len(images), len(ENV_NAMES), gen)
    envs = {
        n: (render(images[i], n, gen), digits[i]) for n, i in zip(ENV_NAMES, parts, strict=True)
    }
    info = TaskInfo(kind="classification", n_outputs=10, input_shape=(3, 8, 8), chance=0.1)
    return domain_task(
        envs, params.test_envs, info, gen, params.holdout_fraction, {"task": "style_digits"}
    )
