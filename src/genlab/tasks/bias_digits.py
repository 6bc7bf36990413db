"""``bias_digits``: digits trained with one augmentation, tested for spectral biases and under
shifts (catalogue #65, Gavrikov & Keuper, CVPR 2024, "Can biases in ImageNet models explain
generalization?").

scikit-learn's 8x8 digits, upsampled to 12x12 and centred on a 16x16 canvas (as
``factor_digits``). The training split holds every training digit once clean and once augmented
(``augment`` at ``strength``, one draw per image, fixed by ``data_seed``): ``none``; a
``factor_digits`` factor (``rotate``, ``translate``, ``scale``, ``noise``, ``contrast``) at
magnitude ``strength``; ``blur`` (Gaussian, sigma ``strength`` pixels); ``lowpass`` /
``highpass`` (the image mixed with its filtered version, weight ``strength``); ``max_train`` caps
the training digits (tiny configurations). Test splits, all
on the same held-out digits with their labels: ``clean``; ``lowpass`` and ``highpass`` (the
spectral-bias probes: only the spatial frequencies below / at or above ``cutoff`` cycles per image
kept, so the two add up to the clean image); and the shifts ``rotate``, ``translate``, ``scale``,
``noise``, ``contrast`` (``factor_digits`` at magnitude 1) and ``blur`` (sigma 1 pixel).
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from pydantic import Field

from genlab.data import Split, TaskData, TaskInfo
from genlab.datasets.digits import load_digits_tensors
from genlab.registry import Params
from genlab.tasks import TASKS
from genlab.tasks.factor_digits import FACTORS, apply

AUGMENTS = ("none", *FACTORS, "blur", "lowpass", "highpass")
SHIFTS = (*FACTORS, "blur")
Augment = Literal[
    "none", "rotate", "translate", "scale", "noise", "contrast", "blur", "lowpass", "highpass"
]


class BiasParams(Params):
    """Params of ``bias_digits``."""

    augment: Augment = Field("none", description="the training augmentation")
    strength: float = Field(1.0, ge=0, le=2, description="its strength (0: clean copies)")
    cutoff: float = Field(2.5, gt=0, lt=8, description="filter cutoff, cycles per image (of 8)")
    test_fraction: float = Field(0.3, gt=0, lt=1, description="share of digits held out")
    max_train: int | None = Field(None, ge=10, description="cap on training digits (None: all)")


def frequency_filter(x: torch.Tensor, cutoff: float, keep: str) -> torch.Tensor:
    """Images ``(n, 1, H, W)`` with only the spatial frequencies of radius below ``cutoff``
    (``keep="low"``) or at and above it (``"high"``) kept; low + high is the image."""
    h, w = x.shape[-2:]
    fy, fx = torch.fft.fftfreq(h) * h, torch.fft.fftfreq(w) * w
    radius = (fy[:, None] ** 2 + fx[None, :] ** 2).sqrt()
    mask = (radius < cutoff) if keep == "low" else (radius >= cutoff)
    return torch.fft.ifft2(torch.fft.fft2(x) * mask.to(x.dtype)).real


def blur(x: torch.Tensor, sigma: float) -> torch.Tensor:
    """Gaussian blur of images ``(n, 1, H, W)`` with ``sigma`` pixels (0: unchanged)."""
    if sigma <= 0:
        return x
    r = max(1, int(3 * sigma + 0.5))
    t = torch.arange(-r, r + 1, dtype=x.dtype)
    k = torch.exp(-(t**2) / (2 * sigma**2))
    k = k / k.sum()
    x = F.conv2d(F.pad(x, [r, r, 0, 0]), k.view(1, 1, 1, -1))
    return F.conv2d(F.pad(x, [0, 0, r, r]), k.view(1, 1, -1, 1))


def augment(x: torch.Tensor, kind: str, s: float, cutoff: float, gen: torch.Generator):
    """One augmented copy of ``x`` (see the module docstring)."""
    if kind == "none":
        return x.clone()
    if kind in FACTORS:
        return apply(x, kind, s, gen)
    if kind == "blur":
        return blur(x, s)
    if kind in ("lowpass", "highpass"):
        return (1 - s) * x + s * frequency_filter(x, cutoff, kind[:-4])
    raise ValueError(f"augment must be one of {', '.join(AUGMENTS)}, got {kind!r}")


@TASKS.register(
    "bias_digits",
    BiasParams,
    papers=(65,),
    family="diagnostics",
    tiny={"augment": "rotate", "test_fraction": 0.04, "max_train": 200},
)
def bias_digits(params: BiasParams, data_seed: int) -> TaskData:
    """Augmented training digits; spectral-bias probes and shifted test splits (#65)."""
    images, y = load_digits_tensors()
    x = F.pad(F.interpolate(images, size=(12, 12), mode="bilinear", align_corners=False), [2] * 4)
    gen = torch.Generator().manual_seed(data_seed)
    order = torch.randperm(len(x), generator=gen)
    k = round(params.test_fraction * len(x))
    held, rest = order[:k], order[k:]
    val, train = rest[: len(rest) // 6], rest[len(rest) // 6 :][: params.max_train]
    aug = augment(x[train], params.augment, params.strength, params.cutoff, gen)
    xh, yh = x[held], y[held]
    test = {
        "clean": xh,
        "lowpass": frequency_filter(xh, params.cutoff, "low"),
        "highpass": frequency_filter(xh, params.cutoff, "high"),
        **{f: apply(xh, f, 1.0, gen) for f in FACTORS},
        "blur": blur(xh, 1.0),
    }
    info = TaskInfo(
        kind="classification",
        n_outputs=10,
        input_shape=(1, 16, 16),
        chance=0.1,
        extra={"envs": ["train"], "train_envs": ["train"], "test_envs": list(test)},
    )
    return TaskData(
        {
            "train": Split(
                torch.cat([x[train], aug]),
                torch.cat([y[train], y[train]]),
                {"env": "train", "augment": params.augment},
            )
        },
        {"train": Split(x[val], y[val], {"env": "train"})},
        {name: Split(v, yh, {"env": name}) for name, v in test.items()},
        info,
    )
