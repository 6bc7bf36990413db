"""``cl_split``: a continual-learning scenario built from any genlab classification task.

A scenario names the base task, the number of experiences, the class order (``order_seed``) and the
data realisation (``data_seed``), as Avalanche's ``nc_benchmark`` / ``PermutedMNIST`` do:

- ``variant="split"``: the classes are cut into ``experiences`` groups (split digits: 5 x 2
  classes); ``scenario="class"`` is class-incremental (one head, every class scored),
  ``scenario="task"`` task-incremental (the experience is known at test time: logits are masked to
  its classes, by the ``cl_accuracy`` probe and the continual methods);
- ``variant="permuted"``: every experience holds all classes under its own fixed permutation of
  the input features (experience 0 unpermuted); ``variant="rotated"``: under its own rotation of a
  2-D image (``max_angle`` spread evenly). Both are domain-incremental;
- ``shots``: a few-shot stream, ``shots`` training examples per class in each experience (the
  few-shot continual setting of the fast/slow-weights paper, #95).

Training environments are ``train/e0 .. e{n-1}``, held-out splits ``test/e0 ..`` (from the base
task's in-distribution ``val`` splits when it has any, else its ``test`` splits). Each split's
``meta`` holds its ``experience``, its ``classes`` and ``mask`` (task-incremental).
``info.extra`` holds ``experiences``, ``classes`` (per experience), ``scenario`` and ``variant``.
Used by the Model Zoo claim (#120); its few-shot stream is the setting of fast/slow weights (#95).
"""

from __future__ import annotations

import math
from typing import Any, Literal

import torch
import torch.nn.functional as F
from pydantic import Field

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.tasks import TASKS


class ClSplitParams(Params):
    """Params of ``cl_split``."""

    base: str = Field("digits", description="a registered classification task")
    base_params: dict[str, Any] = Field(default_factory=dict, description="the base task's params")
    experiences: int = Field(5, ge=2, le=100)
    scenario: Literal["class", "task"] = "class"
    variant: Literal["split", "permuted", "rotated"] = "split"
    order_seed: int | None = Field(
        None, ge=0, description="seed of the class order / permutations (None: classes in order)"
    )
    shots: int | None = Field(None, ge=1, description="training examples per class per experience")
    max_angle: float = Field(90.0, ge=0, le=360, description="rotated: the last experience's angle")


def _pool(splits: dict[str, Split]) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.cat([s.x for s in splits.values()]), torch.cat([s.y for s in splits.values()])


def _rotate(x: torch.Tensor, degrees: float) -> torch.Tensor:
    """Images ``(N, [C,] H, W)`` rotated by ``degrees`` about their centre (bilinear, zero fill)."""
    img = x if x.dim() == 4 else x.unsqueeze(1)
    a = math.radians(degrees)
    theta = torch.tensor([[math.cos(a), -math.sin(a), 0.0], [math.sin(a), math.cos(a), 0.0]])
    grid = F.affine_grid(theta.expand(len(img), 2, 3).to(img.dtype), list(img.shape), False)
    out = F.grid_sample(img, grid, align_corners=False)
    return out if x.dim() == 4 else out.squeeze(1)


def _shots(y: torch.Tensor, k: int | None, gen: torch.Generator) -> torch.Tensor:
    """Row indices keeping ``k`` random examples of each class (all rows when ``k`` is None)."""
    if k is None:
        return torch.arange(len(y))
    keep = [torch.nonzero(y == c).flatten() for c in y.unique()]
    return torch.cat([i[torch.randperm(len(i), generator=gen)[:k]] for i in keep]).sort().values


def _transform(p: ClSplitParams, k: int, x: torch.Tensor, perm: torch.Tensor | None):
    if p.variant == "permuted":
        return x.flatten(1)[:, perm].reshape(x.shape) if k else x
    if p.variant == "rotated":
        return _rotate(x, p.max_angle * k / (p.experiences - 1))
    return x


@TASKS.register(
    "cl_split",
    ClSplitParams,
    papers=(120, 95),
    family="continual",
    tiny={"experiences": 2, "base_params": {"train_size": 200}},
)
def cl_split(params: ClSplitParams, data_seed: int) -> TaskData:
    """A sequence of experiences cut from a classification task (see the module docstring)."""
    entry = TASKS.get(params.base)
    base = entry.obj(entry.params.model_validate(params.base_params), data_seed)
    info = base.info
    if info.kind != "classification":
        raise ValueError(f"task.base must be a classification task, got {params.base!r}")
    if params.variant == "rotated" and len(info.input_shape) not in (2, 3):
        raise ValueError(
            f"variant 'rotated' needs 2-D images, {params.base!r} gives "
            f"{info.input_shape}; use 'permuted' or 'split'"
        )
    n_cls = info.n_outputs
    if params.variant == "split" and params.experiences > n_cls:
        raise ValueError(f"experiences ({params.experiences}) > classes ({n_cls})")
    order_gen = torch.Generator().manual_seed(params.order_seed or 0)
    order = torch.arange(n_cls)
    if params.order_seed is not None:
        order = order[torch.randperm(n_cls, generator=order_gen)]
    x_tr, y_tr = _pool(base.train)
    x_te, y_te = _pool(base.val or base.test)
    gen = torch.Generator().manual_seed(data_seed)
    n_feat = x_tr[0].numel()
    train, test, classes = {}, {}, []
    for k in range(params.experiences):
        if params.variant == "split":
            cls = sorted(order.tensor_split(params.experiences)[k].tolist())
        else:
            cls = list(range(n_cls))
        perm = torch.randperm(n_feat, generator=order_gen) if params.variant == "permuted" else None
        meta = {"experience": k, "classes": cls, "mask": params.scenario == "task"}
        in_tr, in_te = torch.isin(y_tr, torch.tensor(cls)), torch.isin(y_te, torch.tensor(cls))
        xs, ys = x_tr[in_tr], y_tr[in_tr]
        rows = _shots(ys, params.shots, gen)
        train[f"e{k}"] = Split(_transform(params, k, xs[rows], perm), ys[rows], dict(meta))
        test[f"e{k}"] = Split(_transform(params, k, x_te[in_te], perm), y_te[in_te], dict(meta))
        classes.append(cls)
    extra = {
        "experiences": params.experiences,
        "classes": classes,
        "train_envs": list(train),
        "scenario": params.scenario,
        "variant": params.variant,
    }
    chance = 1 / len(classes[0]) if params.scenario == "task" else info.chance
    new_info = TaskInfo(
        info.kind,
        n_cls,
        info.input_shape,
        info.vocab_size,
        info.seq_len,
        chance,
        {**info.extra, **extra},
    )
    return TaskData(train, {}, test, new_info)
