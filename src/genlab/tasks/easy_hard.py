"""``easy_hard_features``: data with a fast-learnable and a slow-learnable feature (USEFUL, #80).

After Nguyen et al.'s data model (NeurIPS 2024, catalogue #80, their Definition 3.1): every example
carries a *slow* feature ``beta_slow * mu_slow[y]`` in one block of coordinates, and with
probability ``p_fast`` a *fast* feature ``beta_fast * mu_fast[y]`` in another (zero otherwise);
``n_noise`` further blocks are pure noise; every coordinate has Gaussian noise ``noise``. Examples
with the fast feature are learned early; the rest can only be classified through the slow one.
Train, val and test follow the same distribution (the claim is about in-distribution accuracy).
Each split's ``meta["fast"]`` marks the examples that carry the fast feature.
"""

from __future__ import annotations

import torch
from pydantic import Field

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.tasks import TASKS


class EasyHardParams(Params):
    """Params of ``easy_hard_features``."""

    n_classes: int = Field(2, ge=2, le=50)
    dim: int = Field(20, ge=1, le=512, description="coordinates per feature block")
    n_noise: int = Field(3, ge=0, le=64, description="blocks of pure noise")
    beta_fast: float = Field(1.0, gt=0)
    beta_slow: float = Field(0.2, gt=0)
    p_fast: float = Field(0.9, ge=0, le=1, description="share of examples with the fast feature")
    noise: float = Field(0.1, gt=0, description="std of every coordinate's noise")
    n_train: int = Field(500, ge=10, le=100_000)
    n_test: int = Field(2000, ge=10, le=100_000)


TINY = {"dim": 8, "n_train": 200, "n_test": 400}


@TASKS.register(
    "easy_hard_features", EasyHardParams, papers=(80,), family="training-regime", tiny=TINY
)
def easy_hard_features(params: EasyHardParams, data_seed: int) -> TaskData:
    """A fast feature in most examples and a weak slow one in all (Nguyen et al., #80)."""
    p = params
    gen = torch.Generator().manual_seed(data_seed)
    mu = torch.randn(2, p.n_classes, p.dim, generator=gen)
    mu = mu / mu.norm(dim=-1, keepdim=True)

    def sample(n: int) -> Split:
        y = torch.randint(0, p.n_classes, (n,), generator=gen)
        fast = torch.rand(n, generator=gen) < p.p_fast
        blocks = [p.beta_fast * mu[0, y] * fast[:, None], p.beta_slow * mu[1, y]]
        blocks += [torch.zeros(n, p.dim)] * p.n_noise
        x = torch.cat(blocks, dim=1)
        x = x + p.noise * torch.randn(x.shape, generator=gen)
        return Split(x, y, {"fast": fast})

    return TaskData(
        train={"main": sample(p.n_train)},
        val={"main": sample(max(p.n_test // 4, 10))},
        test={"iid": sample(p.n_test)},
        info=TaskInfo(
            kind="classification",
            n_outputs=p.n_classes,
            input_shape=((2 + p.n_noise) * p.dim,),
            chance=1 / p.n_classes,
        ),
    )
