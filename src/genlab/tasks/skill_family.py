"""``skill_family``: a family of related classification tasks for modular LoRA composition.

Inputs ``x ~ N(0, I_d)`` pass through a fixed random feature map ``h = relu(U x)`` (centred); a task is a
linear read-out ``y = argmax_c ((W0 + s * sum_{k in K_t} D_k) h)_c`` where ``W0`` is the generic
read-out (task ``-1``: what the base model is pretrained on) and the ``D_k`` are rank-1 "skills".
Upstream task ``i`` (``0 <= i < n_upstream``) adds skill ``i`` alone; unseen task ``n_upstream + j``
adds two skills drawn at random (``family_seed``), so it can be reached by composing the LoRAs of
two upstream tasks and by no single one — the setting LoraHub (Huang et al. 2023, #2) tests at
scale, scaled to the catalogue's CPU design (a tiny base, one rank-4 LoRA per upstream task).
``shots`` keeps that many training examples per class (the few-shot split of the unseen task).
The family (``U``, ``W0``, skills, pairs) depends on ``family_seed``; the sample on ``data_seed``.
``info.extra["family"]`` holds the family's params, for the models that train its upstream LoRAs.
"""

from __future__ import annotations

import torch
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.tasks import TASKS


class SkillFamilyParams(Params):
    """Params of ``skill_family``."""

    task: int = Field(-1, ge=-1, description="-1 generic, < n_upstream upstream, else unseen")
    n_upstream: int = Field(8, ge=2, le=64)
    n_unseen: int = Field(8, ge=1, le=64)
    dim: int = Field(16, ge=2)
    hidden: int = Field(8, ge=2, description="teacher features (classes >= hidden: all are used)")
    classes: int = Field(8, ge=2)
    skill_scale: float = Field(2.0, ge=0, description="s: how far a skill moves the read-out")
    family_seed: int = Field(0, ge=0)
    train_size: int = Field(2000, ge=1)
    test_size: int = Field(1000, ge=1)
    shots: int | None = Field(None, ge=1, description="training examples per class")

    @model_validator(mode="after")
    def _task_exists(self) -> SkillFamilyParams:
        if self.task >= self.n_upstream + self.n_unseen:
            raise ValueError(
                f"task must be < n_upstream + n_unseen = "
                f"{self.n_upstream + self.n_unseen}, got {self.task}"
            )
        return self


def readout(p: SkillFamilyParams) -> tuple[torch.Tensor, torch.Tensor]:
    """``U`` and the task's read-out matrix."""
    g = torch.Generator().manual_seed(10_007 + p.family_seed)
    u = torch.randn(p.hidden, p.dim, generator=g) / p.dim**0.5
    w0 = torch.randn(p.classes, p.hidden, generator=g) / p.hidden**0.5
    skills = [
        torch.outer(torch.randn(p.classes, generator=g), torch.randn(p.hidden, generator=g))
        / p.hidden**0.5
        for _ in range(p.n_upstream)
    ]
    pairs = [torch.randperm(p.n_upstream, generator=g)[:2].tolist() for _ in range(p.n_unseen)]
    if p.task < 0:
        used: list[int] = []
    elif p.task < p.n_upstream:
        used = [p.task]
    else:
        used = pairs[p.task - p.n_upstream]
    return u, w0 + p.skill_scale * sum((skills[k] for k in used), torch.zeros_like(w0))


def _shots(y: torch.Tensor, k: int, classes: int) -> torch.Tensor:
    return torch.cat([torch.nonzero(y == c).flatten()[:k] for c in range(classes)])


@TASKS.register(
    "skill_family",
    SkillFamilyParams,
    papers=(2,),
    family="modular",
    tiny={"train_size": 200, "test_size": 200},
)
def skill_family(params: SkillFamilyParams, data_seed: int) -> TaskData:
    """One task of the skill family (see the module docstring)."""
    u, w = readout(params)
    g = torch.Generator().manual_seed(data_seed)
    x = torch.randn(params.train_size + params.test_size, params.dim, generator=g)
    h = torch.relu(x @ u.T) - u.norm(dim=1) / (2 * torch.pi) ** 0.5  # centred: E[h] = 0
    y = (h @ w.T).argmax(-1)
    tr, te = slice(0, params.train_size), slice(params.train_size, None)
    x_tr, y_tr = x[tr], y[tr]
    if params.shots is not None:
        keep = _shots(y_tr, params.shots, params.classes)
        x_tr, y_tr = x_tr[keep], y_tr[keep]
    family = params.model_dump(exclude={"task", "shots", "train_size", "test_size"})
    info = TaskInfo(
        "classification",
        params.classes,
        (params.dim,),
        chance=float(torch.bincount(y[te], minlength=params.classes).max()) / len(y[te]),
        extra={"family": family, "task": params.task},
    )
    return TaskData({"main": Split(x_tr, y_tr)}, {}, {"heldout": Split(x[te], y[te])}, info)
