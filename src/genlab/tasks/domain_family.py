"""``domain_family``: related classification tasks, each on its own input domain, that share a
general component: the setting of GenKnowSub + Arrow routing (Bagherifard et al. 2025, #89).

Inputs live in ``R^dim`` split into orthogonal subspaces (``family_seed``): a shared subspace ``V0``
(2-d), one 2-d domain subspace ``V_t`` per upstream task, and a subspace ``Vg`` that no task uses.
A task is a linear read-out ``y = argmax_c (M x)_c``:

- task ``-2``, the *base* data: ``x ~ N(0, 1.5^2 I)``, ``M = W0`` (what the base is pretrained on);
- upstream task ``t``: ``x = a z0 + b (mu e_t + z_t) + noise`` (``z0`` in ``V0``, ``z_t`` in ``V_t``,
  ``e_t`` a fixed direction of ``V_t``: the domain's offset), ``M = W0 + shared * G + skill * S_t``,
  ``G`` a general read-out of ``V0`` every task shares (the base lacks it), ``S_t`` a read-out of
  ``V_t`` (the task's own skill);
- held-out task ``n_upstream + j``: its domain blends two upstream domains ``(i, k)`` drawn at random,
  ``x = a z0 + b (mu (e_i + e_k) + z_i + z_k) / sqrt 2 + noise``, ``M = W0 + shared * G + skill
  (S_i + S_k)``: routing each input to the modules of ``i`` and ``k`` is what it needs;
- task ``-1``, the *general* data: with ``general="shared"``, inputs as an upstream task's of a
  random domain, ``M = W0 + general_scale * G`` (the general component, no skill); with
  ``general="disjoint"``, ``x = a zg + noise`` (both in ``Vg``) and ``M = W0 + general_scale * Gd``
  with ``Gd`` a read-out of ``Vg`` (the noise too stays in ``Vg``): general data that share nothing with the tasks (the negative
  control of ``lora.knowledge_subtraction``).

``shared = 0`` removes the component the task LoRAs would share; ``heldout_shared`` (default: as
``shared``) sets it in the held-out tasks alone (a family whose upstream tasks lack ``G`` while the
held-out tasks need it). The family depends on
``family_seed``; the sample on ``data_seed``. ``info.extra["family"]`` holds the family's params.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.tasks import TASKS

SUB = 2  # dimension of each subspace


class DomainFamilyParams(Params):
    """Params of ``domain_family``."""

    task: int = Field(
        -2, ge=-2, description="-2 base data, -1 general, < n_upstream upstream, else held-out"
    )
    n_upstream: int = Field(8, ge=2, le=32)
    n_heldout: int = Field(16, ge=1, le=64)
    dim: int = Field(24, ge=2, description="input dimension (>= 2 * (n_upstream + 2))")
    classes: int = Field(8, ge=2)
    shared: float = Field(2.0, ge=0, description="strength of the general component G in tasks")
    skill: float = Field(1.0, ge=0, description="strength of each task's own read-out S_t")
    general: Literal["shared", "disjoint"] = Field(
        "shared", description="general data on the tasks' inputs, or on a subspace none uses"
    )
    general_scale: float = Field(2.0, ge=0, description="strength of the general data's component")
    heldout_shared: float | None = Field(
        None, ge=0, description="strength of G in held-out tasks (None: as in upstream ones)"
    )
    shared_input: float = Field(1.0, ge=0, description="a: scale of the shared input component")
    domain_input: float = Field(1.0, ge=0, description="b: scale of the domain component")
    offset: float = Field(1.5, ge=0, description="mu: the domain's mean along e_t")
    noise: float = Field(0.3, ge=0, description="isotropic input noise")
    family_seed: int = Field(0, ge=0)
    train_size: int = Field(2000, ge=1)
    test_size: int = Field(1000, ge=1)
    quiet_defaults = {"heldout_shared": None}  # families without it keep their run ids

    @model_validator(mode="after")
    def _fits(self) -> DomainFamilyParams:
        if self.task >= self.n_upstream + self.n_heldout:
            raise ValueError(
                f"task must be < n_upstream + n_heldout = "
                f"{self.n_upstream + self.n_heldout}, got {self.task}"
            )
        if self.dim < SUB * (self.n_upstream + 2):
            raise ValueError(f"dim must be >= 2 * (n_upstream + 2) = {SUB * (self.n_upstream + 2)}")
        return self


def family(p: DomainFamilyParams) -> dict[str, torch.Tensor | list]:
    """The family's subspaces, read-outs and held-out pairs (from ``family_seed``)."""
    g = torch.Generator().manual_seed(20_011 + p.family_seed)
    q, _ = torch.linalg.qr(torch.randn(p.dim, p.dim, generator=g))
    k, c = p.n_upstream, p.classes
    v0, vg = q[:, :SUB], q[:, SUB * (k + 1) : SUB * (k + 2)]
    vs = torch.stack([q[:, SUB * (t + 1) : SUB * (t + 2)] for t in range(k)])  # (k, dim, SUB)
    w0 = torch.randn(c, p.dim, generator=g) / p.dim**0.5
    gen = torch.randn(c, SUB, generator=g) @ v0.T
    gd = torch.randn(c, SUB, generator=g) @ vg.T
    skills = torch.stack([torch.randn(c, SUB, generator=g) @ vs[t].T for t in range(k)])
    pairs = [torch.randperm(k, generator=g)[:2].tolist() for _ in range(p.n_heldout)]
    return {"v0": v0, "vg": vg, "vs": vs, "w0": w0, "G": gen, "Gd": gd, "S": skills, "pairs": pairs}


def sample(p: DomainFamilyParams, n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` inputs of task ``p.task`` and their labels."""
    f = family(p)

    def z(v: torch.Tensor) -> torch.Tensor:
        return torch.randn(n, v.shape[-1], generator=g) @ v.T

    def domain(t: int) -> torch.Tensor:
        return p.offset * f["vs"][t][:, 0] + z(f["vs"][t])

    noise = p.noise * torch.randn(n, p.dim, generator=g)
    if p.task == -2:
        x = 1.5 * torch.randn(n, p.dim, generator=g)
        return x, (x @ f["w0"].T).argmax(-1)
    if p.task == -1 and p.general == "disjoint":
        x = p.shared_input * z(f["vg"]) + noise @ f["vg"] @ f["vg"].T  # nothing outside Vg
        return x, (x @ (f["w0"] + p.general_scale * f["Gd"]).T).argmax(-1)
    if p.task == -1:
        dom = torch.randint(0, p.n_upstream, (n,), generator=g)
        parts = torch.stack([domain(t) for t in range(p.n_upstream)], 1)[torch.arange(n), dom]
        x = p.shared_input * z(f["v0"]) + p.domain_input * parts + noise
        return x, (x @ (f["w0"] + p.general_scale * f["G"]).T).argmax(-1)
    shared = p.shared
    if p.task < p.n_upstream:
        used, part = [p.task], domain(p.task)
    else:
        used = f["pairs"][p.task - p.n_upstream]
        part = (domain(used[0]) + domain(used[1])) / 2**0.5
        if p.heldout_shared is not None:
            shared = p.heldout_shared
    x = p.shared_input * z(f["v0"]) + p.domain_input * part + noise
    m = f["w0"] + shared * f["G"] + p.skill * f["S"][used].sum(0)
    return x, (x @ m.T).argmax(-1)


@TASKS.register(
    "domain_family",
    DomainFamilyParams,
    papers=(89,),
    family="modular",
    tiny={"train_size": 200, "test_size": 200},
)
def domain_family(params: DomainFamilyParams, data_seed: int) -> TaskData:
    """One task of the domain family (see the module docstring)."""
    g = torch.Generator().manual_seed(data_seed * 1_000 + params.task + 2)
    x, y = sample(params, params.train_size + params.test_size, g)
    tr, te = slice(0, params.train_size), slice(params.train_size, None)
    fam = params.model_dump(exclude={"task", "train_size", "test_size"})
    info = TaskInfo(
        "classification",
        params.classes,
        (params.dim,),
        chance=float(torch.bincount(y[te], minlength=params.classes).max()) / len(y[te]),
        extra={"family": fam, "task": params.task},
    )
    return TaskData({"main": Split(x[tr], y[tr])}, {}, {"heldout": Split(x[te], y[te])}, info)
