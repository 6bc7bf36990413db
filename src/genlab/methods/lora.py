"""``lora``: train a rank-r LoRA (Hu et al. 2021, "LoRA: low-rank adaptation of large language
models") on the run's model through PEFT (``genlab[lora]``); the rest of the model stays frozen.
Used with ``model.name=from_run`` to adapt a pretrained base to one task: the per-task modules
that LoraHub (#2) composes."""

from __future__ import annotations

from typing import Any, Literal

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.lora import require_peft
from genlab.lora.adapters import LORA_KEY, attach
from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.registry import Params

SCALE, PREFIX = "adapter_scale", "base_model.model."


class LoraParams(Params):
    """Params of ``lora``."""

    rank: int = Field(4, ge=1)
    alpha: float = Field(4.0, gt=0, description="PEFT's lora_alpha (scale alpha / rank)")
    init_seed: int = Field(0, ge=0, description="seed of A's init, shared by a LoRA library")
    targets: Literal["all", "head"] = Field("all", description="every linear layer, or the last")


@METHODS.register("lora", LoraParams, papers=(2,), family="modular")
class Lora(Method):
    """Cross-entropy through the adapted model; only the LoRA matrices are trained."""

    def __init__(self, params: LoraParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        if info.kind == "regression":
            raise ValueError("method lora trains with cross-entropy: a classification task")
        require_peft()  # before anything is trained or written

    def wrap(self, model: nn.Module) -> nn.Module:
        p = self.params
        wrapped = attach(model, p.rank, p.alpha, p.init_seed, p.targets)
        wrapped.register_buffer(SCALE, torch.tensor(p.alpha / p.rank))
        return wrapped

    @staticmethod
    def plain_state(state: dict[str, Tensor]) -> dict[str, Tensor]:
        """The bare model's weights with the adapter merged in, ``W + (alpha / r) B A`` (PEFT's
        merge), so that soups, WiSE-FT and ``load_model`` read a LoRA run as a plain one."""
        scale = float(state.get(SCALE, 1.0))
        out = {
            k.removeprefix(PREFIX).replace(".base_layer.", "."): v
            for k, v in state.items()
            if LORA_KEY not in k and k != SCALE
        }
        for k, a in state.items():
            if ".lora_A." in k:
                layer = k.removeprefix(PREFIX).split(".lora_A.")[0]
                b = state[k.replace(".lora_A.", ".lora_B.")]
                out[f"{layer}.weight"] = out[f"{layer}.weight"] + scale * b @ a
        return out

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        terms = [cross_entropy(model(x), y) for x, y in batches.values()]
        return sum(terms) / len(terms), {}
