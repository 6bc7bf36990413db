"""``arrow``: combine an ``arrow_library``'s LoRAs per input without training — Arrow routing
(Ostapenko et al. 2024, "Towards modular LLMs by building and reusing a library of LoRAs") and
GenKnowSub (Bagherifard et al. 2025, "GenKnowSub: improving modularity and reusability of LLMs
through general knowledge subtraction", #89).

The method trains nothing: on its first step it sets the model's ``mode`` and Arrow's knobs, and
every step only logs the training loss (the optimizer steps without gradients, so the lr schedule
stays in order). ``mode`` (see ``genlab.derived.arrow_library``): ``base``, ``general`` (base +
general LoRA), ``arrow_base`` (base + Arrow over the task LoRAs), ``arrow`` (base + general LoRA +
Arrow over the task LoRAs), ``genknowsub`` (base + general LoRA + Arrow over task - general),
``peft_arrow`` and ``peft_genknowsub`` (PEFT's own Arrow / GenKnowSub on the base: the general
LoRA's factors subtracted from each task LoRA's, the general LoRA then deleted); ``finetune`` trains the bare base on the task's own training split
with the run's optimizer (a reference that sees the held-out task's labels; the routing modes do
not).
``top_k`` modules per input (PEFT's ``ArrowConfig`` default is 3; 2 here, as each held-out task
of ``domain_family`` blends two domains), softmax ``temperature`` 1 (PEFT's default), and
``subtract`` (``delta`` exact, ``factors`` as the paper's code).
"""

from __future__ import annotations

from typing import Any, Literal

import torch
from pydantic import Field
from torch import nn

from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.registry import Params


class ArrowParams(Params):
    """Params of ``arrow``."""

    mode: Literal[
        "base",
        "general",
        "arrow_base",
        "arrow",
        "genknowsub",
        "peft_arrow",
        "peft_genknowsub",
        "finetune",
    ] = "arrow"
    top_k: int = Field(2, ge=1, description="modules mixed per input")
    temperature: float = Field(1.0, gt=0, description="of the softmax over the top-k scores")
    subtract: Literal["delta", "factors"] = Field(
        "delta", description="residual s B_i A_i - s B_g A_g, or s (B_i - B_g)(A_i - A_g)"
    )


@METHODS.register("arrow", ArrowParams, papers=(89,), family="modular", tiny={"mode": "finetune"})
class Arrow(Method):
    """Set the library's routing once; train nothing."""

    done = False

    def wrap(self, model: nn.Module) -> nn.Module:
        if not hasattr(model, "configure"):
            raise ValueError("method arrow needs model.name=arrow_library")
        p = self.params
        mode = "base" if p.mode == "finetune" else p.mode
        model.configure(mode, p.top_k, p.temperature, p.subtract)
        return model

    def loss(
        self, model: nn.Module, batches: dict[str, Batch]
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        x, y = next(iter(batches.values()))
        return cross_entropy(model(x), y), {}

    def step(
        self, model: nn.Module, optimizer: torch.optim.Optimizer, batches: dict[str, Batch]
    ) -> dict[str, float]:
        if self.params.mode == "finetune":
            return super().step(model, optimizer, batches)
        x, y = next(iter(batches.values()))
        with torch.no_grad():
            loss = cross_entropy(model(x), y).item()
        optimizer.zero_grad(set_to_none=True)
        optimizer.step()  # no gradient: updates nothing
        return {"loss": loss}
