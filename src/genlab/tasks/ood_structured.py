"""``structured_features``: the structured-feature model of feature contamination (Zhang et al.,
"Feature Contamination: Neural Networks Learn Uncorrelated Features and Fail to Generalize", ICML
2024, #76).

``x = [x_core, x_bg]``: core features ``x_core = s * strength / sqrt(d_core) + N(0, noise^2)``
with ``s = 2y - 1``; background features ``x_bg = bg_mean + N(0, noise^2)``, independent of the
label with a non-zero mean. The ``ood`` test split moves the background mean to
``bg_mean * bg_shift``; the core features keep their distribution, so any representation of the
core alone generalizes. ``info.extra["core_dims"]`` says which coordinates are core. The defaults
(core norm 1 against noise 0.5: Bayes accuracy Phi(2) = 0.977; 32 background coordinates of mean 2,
flipped to -2 out of distribution) leave room below 1.0 for a shift to show.
"""

from __future__ import annotations

import math

import torch
from pydantic import Field

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.tasks import TASKS


class StructuredParams(Params):
    """Params of ``structured_features``."""

    d_core: int = Field(4, ge=1, le=256)
    d_bg: int = Field(32, ge=1, le=1024)
    strength: float = Field(1.0, gt=0, description="norm of the core mean (Bayes acc Phi(s/noise))")
    bg_mean: float = Field(2.0, description="mean of every background coordinate")
    bg_shift: float = Field(-1.0, description="OOD background mean = bg_mean * bg_shift")
    noise: float = Field(0.5, gt=0, description="std of the Gaussian noise of every coordinate")
    n_train: int = Field(2000, ge=10)
    n_test: int = Field(2000, ge=10)


def sample(p: StructuredParams, n: int, bg: float, gen: torch.Generator) -> Split:
    y = torch.randint(0, 2, (n,), generator=gen)
    s = (2 * y - 1).float()[:, None]
    core = s * p.strength / math.sqrt(p.d_core) + p.noise * torch.randn(n, p.d_core, generator=gen)
    back = bg + p.noise * torch.randn(n, p.d_bg, generator=gen)
    return Split(torch.cat([core, back], dim=1), y, {"bg_mean": bg})


@TASKS.register(
    "structured_features",
    StructuredParams,
    papers=(76,),
    family="ood",
    tiny={"n_train": 100, "n_test": 100},
)
def structured_features(params: StructuredParams, data_seed: int) -> TaskData:
    """Core features carry the label, background features (non-zero mean) do not (#76).

    Splits: ``train/id``, ``val/id``, ``test/id`` and ``test/ood`` (background mean shifted).
    """
    gen = torch.Generator().manual_seed(data_seed)
    p = params
    return TaskData(
        train={"id": sample(p, p.n_train, p.bg_mean, gen)},
        val={"id": sample(p, max(p.n_test // 4, 10), p.bg_mean, gen)},
        test={
            "id": sample(p, p.n_test, p.bg_mean, gen),
            "ood": sample(p, p.n_test, p.bg_mean * p.bg_shift, gen),
        },
        info=TaskInfo(
            kind="classification",
            n_outputs=2,
            input_shape=(p.d_core + p.d_bg,),
            chance=0.5,
            extra={"core_dims": p.d_core, "train_envs": ["id"]},
        ),
    )
