"""``shifted_digits``: environments of 8x8 digits that differ in layout only, not in appearance.

The digits are shuffled and dealt into four disjoint environments (as ``rotated_digits`` does),
each rolled circularly by 0, 1, 2 or 3 pixels down and to the right; ten classes. An integer
circular shift moves every pixel without changing its value, so each image keeps its exact
intensity histogram (mean, contrast, brightness): unlike a bilinear rotation, which lowers every
rotated image's contrast (per-image std 0.377 -> 0.315 on these digits), the shift carries no
appearance change at all. The negative control of ``dg.instance_norm`` (IBN-Net, Pan et al., #7):
instance statistics that do not change leave instance normalization nothing to remove.
"""

from __future__ import annotations

import torch
from pydantic import Field, field_validator

from genlab.data import TaskData, TaskInfo
from genlab.datasets.digits import load_digits_tensors
from genlab.datasets.domains import check_test_envs, domain_task, shuffled_parts
from genlab.registry import Params
from genlab.tasks import TASKS

SHIFTS = (0, 1, 2, 3)
ENV_NAMES = tuple(f"{s}px" for s in SHIFTS)


class ShiftedDigitsParams(Params):
    """Params of ``shifted_digits``."""

    test_envs: list[int] = Field(
        default_factory=lambda: [1, 2, 3], description="held-out env indices 0..3 (0-3 px)"
    )
    holdout_fraction: float = Field(0.2, gt=0, lt=1, description="share of each env for val")

    @field_validator("test_envs")
    @classmethod
    def _envs(cls, v: list[int]) -> list[int]:
        return check_test_envs(v, len(ENV_NAMES), ENV_NAMES)


@TASKS.register("shifted_digits", ShiftedDigitsParams, papers=(7,), family="domain-shift")
def shifted_digits(params: ShiftedDigitsParams, data_seed: int) -> TaskData:
    """Four translation environments of ten-class digits (circular shifts, appearance unchanged).

    Params: ``test_envs`` (default all but ``0px``), ``holdout_fraction`` (0.2).
    """
    images, digits = load_digits_tensors()
    gen = torch.Generator().manual_seed(data_seed)
    parts = shuffled_parts(len(images), len(SHIFTS), gen)
    envs = {
        n: (torch.roll(images[i], (s, s), dims=(2, 3)), digits[i])
        for n, s, i in zip(ENV_NAMES, SHIFTS, parts, strict=True)
    }
    info = TaskInfo(kind="classification", n_outputs=10, input_shape=(1, 8, 8), chance=0.1)
    return domain_task(
        envs, params.test_envs, info, gen, params.holdout_fraction, {"task": "shifted_digits"}
    )
