"""``lorahub``: compose a library of task LoRAs for an unseen task from a few examples
(LoraHub, Huang et al. 2023, "LoraHub: efficient cross-task generalization via dynamic LoRA
composition", #2), with its baselines.

On its first step the method sees the few-shot training split (``batch_size = null``) and sets the
``lora_hub`` model's merge weights ``w``; later steps change nothing (each step logs the few-shot
loss before its update, as every method does). ``mode``:

- ``lorahub``: ``w`` minimises the few-shot cross-entropy + ``l1 * mean|w|`` by nevergrad's
  ``NGOpt`` within ``[-1.5, 1.5]``, from ``w = 0``, in ``budget`` evaluations (the paper's search:
  gradient-free, no new parameters; its code uses the same bounds, budget 40 and l1 0.05);
- ``uniform``: ``w = 1 / N`` (the average of the modules); ``best_single``: the one module with the
  lowest few-shot loss; ``base``: ``w = 0`` (the pretrained base alone);
- ``finetune``: a fresh LoRA (shared init, ``B = 0``, as ``lora_hub`` is built) trained on the
  same shots by the run's own optimizer, one gradient step per run step (so ``steps``,
  ``optimizer`` and ``optimizer.grad_clip`` apply): the few-shot fine-tuning reference LoraHub
  approaches.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

import numpy as np
import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.registry import Params


class LoraHubParams(Params):
    """Params of ``lorahub``."""

    mode: Literal["lorahub", "uniform", "best_single", "base", "finetune"] = "lorahub"
    l1: float = Field(0.05, ge=0, description="weight of mean|w| in the search's objective")
    budget: int = Field(40, ge=1, description="nevergrad evaluations")
    bound: float = Field(1.5, gt=0, description="w is searched in [-bound, bound]")
    search_seed: int = Field(0, ge=0)


@METHODS.register(
    "lorahub", LoraHubParams, papers=(2,), family="modular", tiny={"mode": "finetune"}
)
class LoraHub(Method):
    """Set the merge weights of a ``lora_hub`` model once, from the few shots."""

    done = False

    def wrap(self, model: nn.Module) -> nn.Module:
        if not hasattr(model, "compose"):
            raise ValueError("method lorahub needs model.name=lora_hub")
        return model

    @torch.no_grad()
    def few_shot_loss(self, model: nn.Module, w: np.ndarray, x: Tensor, y: Tensor) -> float:
        model.compose(torch.as_tensor(w, dtype=torch.float32))
        return cross_entropy(model(x), y).item()

    def search(self, model: nn.Module, x: Tensor, y: Tensor) -> np.ndarray:
        from genlab.lora import require_nevergrad

        ng = require_nevergrad()
        p = self.params
        n = model.size
        param = ng.p.Array(init=np.zeros(n)).set_bounds(-p.bound, p.bound)
        param.random_state = np.random.RandomState(p.search_seed)
        opt = ng.optimizers.NGOpt(parametrization=param, budget=p.budget)
        with warnings.catch_warnings():  # NGOpt's COBYLA warns of its own tolerance on each run
            warnings.filterwarnings("ignore", message="COBYLA: Invalid RHOEND")
            best = opt.minimize(
                lambda w: self.few_shot_loss(model, w, x, y) + p.l1 * np.abs(w).mean()
            )
        return np.asarray(best.value)

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x, y = next(iter(batches.values()))
        return cross_entropy(model(x), y), {"l1": float(model.w.detach().abs().mean())}

    def step(
        self, model: nn.Module, optimizer: torch.optim.Optimizer, batches: dict[str, Batch]
    ) -> dict[str, float]:
        (x, y), mode = next(iter(batches.values())), self.params.mode
        if mode == "finetune":
            return super().step(model, optimizer, batches)
        with torch.no_grad():
            loss = cross_entropy(model(x), y).item()  # before the update
        if not self.done:
            self.done = True
            w = {
                "base": lambda: np.zeros(model.size),
                "uniform": lambda: np.full(model.size, 1.0 / model.size),
                "best_single": lambda: np.eye(model.size)[
                    int(np.argmin([self.few_shot_loss(model, e, x, y) for e in np.eye(model.size)]))
                ],
                "lorahub": lambda: self.search(model, x, y),
            }[mode]()
            model.compose(torch.as_tensor(w, dtype=torch.float32))
        optimizer.zero_grad(set_to_none=True)
        optimizer.step()  # no gradient: updates nothing, keeps the lr schedule in order
        return {"loss": loss, "l1": float(model.w.detach().abs().mean())}  # l1: the weights set

    def state_dict(self) -> dict[str, Any]:
        return {"done": self.done}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.done = bool(state.get("done", False))
