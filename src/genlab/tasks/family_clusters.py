"""Families of near-duplicates, split at random or by similarity cluster (catalogue #3, PPIformer's
leakage-free splits, Bushuiev et al., ICLR 2024).

``families`` prototypes ``p_f ~ N(0, spread^2 I_d)``; each family's ``per_family`` members are
``x = p_f + noise * eps``. The label is ``y = 1[w.x / |w| + b_f > 0]``: a rule that holds for every
family (``w``) plus an offset ``b_f ~ N(0, family_effect^2)`` of the family's own, which a model
can learn only by memorizing the family. The pool is split into train and ``test/heldout`` at
random (``split="random"``, the leaky protocol) or by cluster (``split="cluster"``:
``genlab.splits.cluster_split``, whole similarity clusters held out). ``test/fresh`` holds members
of ``fresh_families`` new families from the same process: the generalization a split should
estimate. ``val/train`` is a random tenth of the training side (training-distribution fit).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from pydantic import Field

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.splits import cluster_split, random_split
from genlab.tasks import TASKS


class FamilyParams(Params):
    """Params of ``family_clusters``."""

    d: int = Field(8, ge=1, le=512, description="input dimension")
    families: int = Field(100, ge=4, description="families in the pool that is split")
    per_family: int = Field(20, ge=1, description="members per family")
    spread: float = Field(3.0, gt=0, description="std of the family prototypes")
    noise: float = Field(0.5, ge=0, description="std of members around their prototype")
    family_effect: float = Field(1.5, ge=0, description="std of each family's label offset")
    split: Literal["random", "cluster"] = Field("random", description="how test/heldout is drawn")
    test_fraction: float = Field(0.25, gt=0, lt=1, description="share of the pool held out")
    threshold: float | None = Field(
        None,
        gt=0,
        description="cluster distance cut (None: 4 x noise"
        " x sqrt(d), between members and families)",
    )
    fresh_families: int = Field(50, ge=1, description="new families in test/fresh")


def _draw(params: FamilyParams, k: int, w: np.ndarray, rng: np.random.Generator):
    protos = rng.normal(0.0, params.spread, (k, params.d))
    offsets = rng.normal(0.0, params.family_effect, k) if params.family_effect else np.zeros(k)
    fam = np.repeat(np.arange(k), params.per_family)
    x = protos[fam] + rng.normal(0.0, params.noise, (len(fam), params.d))
    y = (x @ w + offsets[fam] > 0).astype(np.int64)
    return x, y


def _split(x: np.ndarray, y: np.ndarray, idx: np.ndarray, **meta) -> Split:
    return Split(torch.tensor(x[idx], dtype=torch.float32), torch.tensor(y[idx]), meta)


@TASKS.register(
    "family_clusters",
    FamilyParams,
    papers=(3,),
    family="ood",
    tiny={"families": 8, "per_family": 4, "fresh_families": 4},
)
def family_clusters(params: FamilyParams, data_seed: int) -> TaskData:
    """A pool of families split at random or by cluster; ``test/fresh``: new families (#3)."""
    rng = np.random.default_rng(data_seed)
    w = rng.normal(size=params.d)
    w /= np.linalg.norm(w)
    x, y = _draw(params, params.families, w, rng)
    if params.split == "random":
        train, held = random_split(len(x), params.test_fraction, data_seed)
    else:
        cut = params.threshold or 4 * params.noise * np.sqrt(params.d) or 1e-6
        train, held = cluster_split(x, params.test_fraction, cut, data_seed)
    val = rng.choice(train, max(1, len(train) // 10), replace=False)
    fit = np.setdiff1d(train, val)
    fx, fy = _draw(params, params.fresh_families, w, rng)
    return TaskData(
        {"train": _split(x, y, fit, env="train")},
        {"train": _split(x, y, val, env="train")},
        {
            "heldout": _split(x, y, held, env=params.split),
            "fresh": _split(fx, fy, np.arange(len(fx)), env="fresh"),
        },
        TaskInfo(
            kind="classification",
            n_outputs=2,
            input_shape=(params.d,),
            chance=0.5,
            extra={"envs": ["train"], "train_envs": ["train"], "test_envs": ["heldout", "fresh"]},
        ),
    )
