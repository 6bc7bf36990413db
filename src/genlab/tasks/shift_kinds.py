"""``shift_kinds_digits``: the same held-out digits under an image shift and under a label shift
(catalogue #105, Cohen et al., MIDL 2020, "On the limits of cross-domain generalization in
automated X-ray prediction").

scikit-learn's 8x8 digits, upsampled to 12x12 and centred on a 16x16 canvas (as
``factor_digits``). Training and validation images carry the source labels. Three test splits hold
the same held-out digits:

- ``clean``: unchanged, source labels (in distribution);
- ``image``: a covariate shift, ``p(x)`` moves and ``p(y|x)`` stays: ``image_factors`` of
  ``factor_digits`` applied at ``image_shift`` (1.0: +-40 degrees, 3 pixels), source labels;
- ``label``: a label shift in the paper's sense (another dataset's labelling convention: ``p(y|x)``
  moves and ``p(x)`` stays): clean images whose labels follow a target convention that names
  ``round(10 * label_shift)`` source classes differently (a cycle among them, or, for one class,
  its neighbour's name), chosen by ``data_seed``.

Params: ``image_shift`` (0: the image split is the clean images), ``image_factors``,
``label_shift`` (0: the label split has the source labels), ``test_fraction``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from pydantic import Field, field_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.datasets.digits import load_digits_tensors
from genlab.registry import Params
from genlab.tasks import TASKS
from genlab.tasks.factor_digits import FACTORS, apply


class ShiftKindsParams(Params):
    """Params of ``shift_kinds_digits``."""

    image_shift: float = Field(1.0, ge=0, le=2, description="strength of the image factors")
    image_factors: list[str] = Field(
        default_factory=lambda: ["rotate", "translate"],
        min_length=1,
        description=f"factor_digits factors of the image shift ({', '.join(FACTORS)})",
    )
    label_shift: float = Field(
        0.3, ge=0, le=1, description="share of the 10 classes the target convention renames"
    )
    test_fraction: float = Field(0.3, gt=0, lt=1, description="share of digits held out")

    @field_validator("image_factors")
    @classmethod
    def _factors(cls, v: list[str]) -> list[str]:
        bad = [f for f in v if f not in FACTORS]
        if bad:
            raise ValueError(f"image_factors must be among {', '.join(FACTORS)}, got {bad}")
        return v


def target_convention(label_shift: float, gen: torch.Generator, classes: int = 10) -> torch.Tensor:
    """The target's name for each source class: ``round(classes * label_shift)`` classes drawn
    by ``gen`` are renamed along a cycle (one class alone takes its neighbour's name)."""
    k = round(classes * label_shift)
    names = torch.arange(classes)
    if k == 0:
        return names
    moved = torch.randperm(classes, generator=gen)[:k]
    names[moved] = moved.roll(-1) if k > 1 else (moved + 1) % classes
    return names


@TASKS.register(
    "shift_kinds_digits",
    ShiftKindsParams,
    papers=(105,),
    family="domain-shift",
    tiny={"test_fraction": 0.04},
)
def shift_kinds_digits(params: ShiftKindsParams, data_seed: int) -> TaskData:
    """Source digits; one held-out set clean, image-shifted and label-shifted (#105)."""
    images, y = load_digits_tensors()
    x = F.pad(F.interpolate(images, size=(12, 12), mode="bilinear", align_corners=False), [2] * 4)
    gen = torch.Generator().manual_seed(data_seed)
    order = torch.randperm(len(x), generator=gen)
    k = round(params.test_fraction * len(x))
    held, rest = order[:k], order[k:]
    val, train = rest[: len(rest) // 6], rest[len(rest) // 6 :]
    shifted = x[held]
    for f in params.image_factors:
        shifted = apply(shifted, f, params.image_shift, gen)
    names = target_convention(params.label_shift, gen)
    test = {
        "clean": Split(x[held], y[held], {"env": "clean", "shift": "none"}),
        "image": Split(shifted, y[held], {"env": "image", "shift": "covariate"}),
        "label": Split(
            x[held],
            names[y[held]],
            {"env": "label", "shift": "label", "renamed": int((names != torch.arange(10)).sum())},
        ),
    }
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
