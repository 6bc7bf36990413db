"""``digits_views``: one set of digit images, several labelings (auxiliary / teacher tasks).

The images are scikit-learn's 8x8 digits, each rotated by an angle drawn from ``angles``; the label
is chosen by ``label``: the digit ``class`` (10), its ``parity`` (2), whether it is ``large``
(>= 5, 2) or the index of its ``rotation`` in ``angles``. With the same ``data_seed`` and
``angles`` every labeling sees the same images, so models trained on different views can be
distilled into one student (UNIC, Sariyildiz et al., #77) or recycled as auxiliary fine-tunings
(model ratatouille, Rame et al., #102; the catalogue's "rotation prediction, parity, >=5").
Splits: ``train/main``, ``val/main``, ``test/heldout``.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.datasets.digits import load_digits_tensors
from genlab.registry import Params
from genlab.tasks import TASKS
from genlab.tasks.dg_rotated import rotate

N_OUT = {"class": 10, "parity": 2, "large": 2}


class DigitsViewsParams(Params):
    """Params of ``digits_views``."""

    label: Literal["class", "parity", "large", "rotation"] = "class"
    angles: list[float] = Field(
        default_factory=lambda: [0.0],
        min_length=1,
        description="rotation angles (degrees) drawn per image",
    )
    train_size: int = Field(1000, ge=10, le=1300)
    val_size: int = Field(200, ge=10, le=200)

    @model_validator(mode="after")
    def _rot(self) -> DigitsViewsParams:
        if self.label == "rotation" and len(set(self.angles)) < 2:
            raise ValueError("label='rotation' needs at least two distinct angles")
        return self


def labels(kind: str, digits: torch.Tensor, angle_idx: torch.Tensor) -> torch.Tensor:
    if kind == "class":
        return digits
    if kind == "parity":
        return digits % 2
    if kind == "large":
        return (digits >= 5).long()
    return angle_idx


@TASKS.register("digits_views", DigitsViewsParams, papers=(77, 102), family="ensembles")
def digits_views(params: DigitsViewsParams, data_seed: int) -> TaskData:
    """Rotated digits labelled by class, parity, >= 5 or rotation (#77, #102)."""
    images, digits = load_digits_tensors()
    gen = torch.Generator().manual_seed(data_seed)
    order = torch.randperm(len(images), generator=gen)
    angle_idx = torch.randint(0, len(params.angles), (len(images),), generator=gen)
    x = images.clone()
    for k, a in enumerate(params.angles):
        sel = angle_idx == k
        if a % 360 and sel.any():
            x[sel] = rotate(images[sel], a)
    y = labels(params.label, digits, angle_idx)
    tr = order[: params.train_size]
    va = order[1300 : 1300 + params.val_size]
    te = order[1500:]

    def split(idx: torch.Tensor) -> Split:
        return Split(x[idx], y[idx], {"label": params.label})

    n_out = N_OUT.get(params.label, len(params.angles))
    return TaskData(
        train={"main": split(tr)},
        val={"main": split(va)},
        test={"heldout": split(te)},
        info=TaskInfo(
            kind="classification", n_outputs=n_out, input_shape=(1, 8, 8), chance=1 / n_out
        ),
    )
