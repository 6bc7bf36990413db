"""``artier_digits``: a PACS-lite of scikit-learn's 8x8 digits in four depiction domains.

For the low-rank domain-generalization claim of Li et al., "Deeper, Broader and Artier Domain
Generalization" (ICCV 2017, #17), whose PACS benchmark spans photo, art painting, cartoon and
sketch. The digits are dealt into four disjoint environments, each drawn in one depiction
(RGB, 8x8):

* ``photo``: grey ink under a smooth random illumination gradient with a faint colour cast;
* ``art_painting``: random ink and canvas colours under a coarse random paint texture;
* ``cartoon``: flat, posterised ink (two levels) in a saturated random colour on a flat random
  background, with a dark outline;
* ``sketch``: the ink's edges only (gradient magnitude), dark strokes on white.

``artier=False`` draws every environment as ``photo`` (four domains of one depiction: no domain
shift), the control where a domain-agnostic part has nothing to factor out. Leave-one-domain-out
via ``test_envs``; splits as in DomainBed (``genlab.datasets.domains``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from pydantic import Field, field_validator

from genlab.data import TaskData, TaskInfo
from genlab.datasets.digits import load_digits_tensors
from genlab.datasets.domains import check_test_envs, domain_task, shuffled_parts
from genlab.registry import Params
from genlab.tasks import TASKS

ENV_NAMES = ("photo", "art_painting", "cartoon", "sketch")


class ArtierDigitsParams(Params):
    """Params of ``artier_digits``."""

    test_envs: list[int] = Field(
        default_factory=lambda: [3],
        description="held-out env indices: 0=photo 1=art_painting 2=cartoon 3=sketch",
    )
    artier: bool = Field(True, description="False: every domain drawn as photo (no shift)")
    holdout_fraction: float = Field(0.2, gt=0, lt=1, description="share of each env for val")

    @field_validator("test_envs")
    @classmethod
    def _envs(cls, v: list[int]) -> list[int]:
        return check_test_envs(v, len(ENV_NAMES), ENV_NAMES)


def _rand(n: int, *shape: int, gen: torch.Generator) -> torch.Tensor:
    return torch.rand(n, *shape, generator=gen)


def depict(ink: torch.Tensor, style: str, gen: torch.Generator) -> torch.Tensor:
    """``(N, 1, 8, 8)`` ink in [0, 1] to ``(N, 3, 8, 8)`` RGB in one depiction."""
    n, _, h, w = ink.shape
    if style == "photo":
        ramp = torch.linspace(-1, 1, w)[None, None, None, :] * (_rand(n, 1, 1, 1, gen=gen) - 0.5)
        light = 0.8 + 0.4 * ramp
        cast = 1 + 0.1 * (_rand(n, 3, 1, 1, gen=gen) - 0.5)
        return (0.15 + 0.7 * ink) * light * cast
    if style == "art_painting":
        fg, bg = _rand(n, 3, 1, 1, gen=gen), _rand(n, 3, 1, 1, gen=gen)
        texture = F.interpolate(
            _rand(n, 3, 2, 2, gen=gen), size=(h, w), mode="bilinear", align_corners=False
        )
        return 0.6 * (ink * fg + (1 - ink) * bg) + 0.4 * texture
    if style == "cartoon":
        flat = (ink > 0.4).float()
        grad = flat - F.avg_pool2d(flat, 3, stride=1, padding=1, count_include_pad=False)
        outline = (grad.abs() > 0.2).float() * (1 - flat)
        hue = torch.eye(3)[torch.randint(0, 3, (n,), generator=gen)][:, :, None, None]
        bg = 0.6 + 0.4 * _rand(n, 3, 1, 1, gen=gen)
        return (flat * hue + (1 - flat) * bg) * (1 - outline)
    if style == "sketch":
        gx = F.pad(ink[..., :, 1:] - ink[..., :, :-1], (0, 1))
        gy = F.pad(ink[..., 1:, :] - ink[..., :-1, :], (0, 0, 0, 1))
        edges = (gx.hypot(gy) / 0.5).clamp(max=1.0)
        return (1 - edges).expand(n, 3, h, w).clone()
    raise ValueError(f"unknown depiction {style!r}")


@TASKS.register("artier_digits", ArtierDigitsParams, papers=(17,), family="domain-shift")
def artier_digits(params: ArtierDigitsParams, data_seed: int) -> TaskData:
    """Digits as photo, art painting, cartoon and sketch, one domain held out (PACS-lite, #17)."""
    images, digits = load_digits_tensors()
    gen = torch.Generator().manual_seed(data_seed)
    parts = shuffled_parts(len(images), len(ENV_NAMES), gen)
    envs = {}
    for name, idx in zip(ENV_NAMES, parts, strict=True):
        style = name if params.artier else "photo"
        envs[name] = (depict(images[idx], style, gen), digits[idx])
    info = TaskInfo(kind="classification", n_outputs=10, input_shape=(3, 8, 8), chance=0.1)
    return domain_task(
        envs,
        params.test_envs,
        info,
        gen,
        params.holdout_fraction,
        {"task": "artier_digits", "artier": params.artier},
    )
