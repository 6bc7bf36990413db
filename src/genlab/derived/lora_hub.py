"""``lora_hub``: a pretrained base with a library of task LoRAs, ready to be composed (LoraHub,
Huang et al. 2023, #2).

Built for a ``skill_family`` task, it first makes sure the store holds (training them once, as
ordinary runs) the base model, an ``mlp`` pretrained on the family's generic task, and one rank-r
LoRA per upstream task (``from_run`` of the base + method ``lora``), each adapter saved as a
``lora`` artifact; then it returns the base wrapped by PEFT with one adapter whose ``A`` and ``B``
are ``sum_i w_i A_i`` and ``sum_i w_i B_i`` (LoraHub's element-wise merge) for weights ``w`` set by
``compose`` (all zero: the base itself). Needs ``genlab[lora]``.
"""

from __future__ import annotations

from typing import Any, Literal

import torch
from pydantic import Field
from torch import nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params


class LoraHubParams(Params):
    """Params of ``lora_hub``: how the base and the upstream LoRAs are trained."""

    width: int = Field(64, ge=1)
    depth: int = Field(2, ge=1)
    base_steps: int = Field(2000, ge=1)
    lora_steps: int = Field(1000, ge=1)
    rank: int = Field(4, ge=1)
    lr: float = Field(3e-3, gt=0)
    weight_decay: float = Field(
        0.1, ge=0, description="AdamW's, for the base and the LoRAs (keeps the base's logits small)"
    )
    init_seed: int = Field(0, ge=0)
    targets: Literal["all", "head"] = Field(
        "head", description="layers the LoRAs adapt: the family's skills live in the read-out"
    )


def upstream_specs(p: LoraHubParams, family: dict[str, Any]) -> tuple[dict, list[dict]]:
    """The base run's spec and each upstream LoRA's (their parent is filled in later)."""
    task = {"name": "skill_family", "params": {**family}}
    common = {
        "batch_size": 64,
        "optimizer": {"name": "adamw", "lr": p.lr, "weight_decay": p.weight_decay},
        "eval": {"every": 100000, "log_points": 0},
    }
    base = {
        **common,
        "task": {**task, "params": {**family, "task": -1}},
        "steps": p.base_steps,
        "model": {"name": "mlp", "params": {"width": p.width, "depth": p.depth}},
    }
    loras = [
        {
            **common,
            "task": {**task, "params": {**family, "task": i}},
            "steps": p.lora_steps,
            "method": {
                "name": "lora",
                "params": {
                    "rank": p.rank,
                    "alpha": float(p.rank),
                    "init_seed": p.init_seed,
                    "targets": p.targets,
                },
            },
        }
        for i in range(family["n_upstream"])
    ]
    return base, loras


class LoraLibrary(nn.Module):
    """The PEFT-wrapped base, the stacked library (``A``/``B`` per adapted layer) and ``w``."""

    def __init__(self, peft_model: nn.Module, library: list[dict[str, torch.Tensor]]) -> None:
        super().__init__()
        self.peft = peft_model
        self.names = sorted(library[0])
        own = dict(peft_model.named_parameters())
        for i, name in enumerate(self.names):
            self.register_buffer(f"lib{i}", torch.stack([lib[name] for lib in library]))
            self.register_buffer(f"init{i}", own[name].detach().clone())  # the shared init
        self.w = nn.Parameter(torch.zeros(len(library)))
        self.compose(self.w.detach())

    @property
    def size(self) -> int:
        return len(self.w)

    @torch.no_grad()
    def compose(self, w: torch.Tensor) -> None:
        """Set the adapter to the library merged with weights ``w``; ``w = 0`` is a fresh LoRA
        (``A`` at the shared init, ``B = 0``: the base's function, trainable by gradient)."""
        self.w.copy_(w)
        own = dict(self.peft.named_parameters())
        for i, name in enumerate(self.names):
            stack = getattr(self, f"lib{i}")
            merged = torch.einsum("n,n...->...", w.to(stack.dtype), stack)
            fresh = "lora_A" in name and not bool(w.any())
            own[name].copy_(getattr(self, f"init{i}") if fresh else merged)

    def adapter(self) -> list[nn.Parameter]:
        """The adapter's own trainable matrices (few-shot fine-tuning trains these)."""
        own = dict(self.peft.named_parameters())
        return [own[n] for n in self.names]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.peft(x)


def _tiny(root: object) -> dict[str, int]:
    return {"width": 8, "depth": 1, "base_steps": 2, "lora_steps": 2}


@MODELS.register("lora_hub", LoraHubParams, papers=(2,), family="modular", tiny=_tiny)
def lora_hub(params: LoraHubParams, info: TaskInfo) -> nn.Module:
    """The base with its library of upstream LoRAs (trained into the store when missing)."""
    from genlab.derived.lora_library import train_library
    from genlab.lora import require_nevergrad, require_peft
    from genlab.lora.adapters import attach
    from genlab.store_context import active_store

    require_peft(), require_nevergrad()  # before anything is trained or written
    family = info.extra.get("family")
    if family is None:
        raise ValueError("model lora_hub needs a skill_family task (task.name=skill_family)")
    base_d, lora_ds = upstream_specs(params, family)
    model, library = train_library(active_store(), base_d, lora_ds, info)
    peft_model = attach(model, params.rank, float(params.rank), params.init_seed, params.targets)
    return LoraLibrary(peft_model, library)
