"""``from_run``: a model initialised from a finished run's weights (fine-tuning, linear probing).

The architecture is the parent's (its own root architecture if the parent is itself ``from_run``),
built for this run's task; the parent's plain weights are loaded (``genlab.weights.load``). The
output layer can be kept (``head="parent"``, same number of outputs), drawn afresh from
``head_seed`` (``"new"``: every run with the same ``head_seed`` starts from the same head, so
fine-tunings from different parents can still be averaged) or copied from another run
(``"run"``, e.g. a linear probe as in model ratatouille, Rame et al. #102, after Kumar et al.'s
LP-FT). ``freeze="features"`` trains the output layer only and keeps the rest in eval mode
(batch-norm statistics frozen): a linear probe. This is how WiSE-FT's fine-tuned endpoint starts
from the pre-trained one (Lin et al., #16). The parent is read from the store the run is trained
into (``genlab.store_context``).
"""

from __future__ import annotations

from types import MethodType
from typing import Literal

import torch
from pydantic import Field, model_validator
from torch import nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params

RUN_ID = r"^[0-9a-f]{16}$"


class FromRunParams(Params):
    """Params of ``from_run``."""

    run: str = Field(pattern=RUN_ID, description="id of the finished run whose weights start it")
    head: Literal["parent", "new", "run"] = Field(
        "parent", description="output layer: the parent's, a fresh one, or head_run's"
    )
    head_run: str | None = Field(None, pattern=RUN_ID, description="run giving the output layer")
    head_seed: int = Field(0, ge=0, description="seed of a fresh output layer (head='new')")
    freeze: Literal["none", "features"] = Field(
        "none", description="'features': train the output layer only (a linear probe)"
    )

    @model_validator(mode="after")
    def _head_run(self) -> FromRunParams:
        if (self.head == "run") != (self.head_run is not None):
            raise ValueError("head_run is required with head='run' and only then")
        return self


def freeze_features(model: nn.Module, head: nn.Module) -> None:
    """Train only ``head``: other parameters stop requiring grads and their modules stay in eval
    mode whatever ``model.train()`` is asked (so batch-norm statistics do not move)."""
    inside = set(head.modules())
    for p in model.parameters():
        p.requires_grad_(False)
    for p in head.parameters():
        p.requires_grad_(True)

    def train(self: nn.Module, mode: bool = True) -> nn.Module:
        nn.Module.train(self, mode)
        for m in self.modules():
            if m not in inside:
                m.training = False
        return self

    model.train = MethodType(train, model)  # type: ignore[method-assign]
    model.train()


def _tiny(root: object) -> dict[str, str]:
    """A two-step tiny CNN on ``colored_digits`` as the parent (``derived.runs``)."""
    from genlab.derived.runs import tiny_parent

    return {"run": tiny_parent("colored_digits", "cnn")}


@MODELS.register("from_run", FromRunParams, papers=(16, 102), tiny=_tiny)
def from_run(params: FromRunParams, info: TaskInfo) -> nn.Module:
    """A model starting from a finished run's weights; output layer kept, fresh or copied."""
    from genlab.store_context import active_store
    from genlab.weights.load import build_plain, finished_spec, head_of, load_into, plain_state

    store = active_store()
    model = build_plain(store, finished_spec(store, params.run), info)
    name, head = head_of(model)
    state = plain_state(store, params.run)
    if params.head != "parent":
        own = {k: v for k, v in model.state_dict().items() if k.startswith(name + ".")}
        state = {k: v for k, v in state.items() if not k.startswith(name + ".")}
        if params.head == "new":
            with torch.random.fork_rng():
                torch.manual_seed(params.head_seed)
                head.reset_parameters()
            own = {k: v for k, v in model.state_dict().items() if k.startswith(name + ".")}
        else:
            donor = plain_state(store, params.head_run)  # type: ignore[arg-type]
            own = {k: v for k, v in donor.items() if k.startswith(name + ".")}
        state = {**state, **own}
    load_into(model, state, f"run {params.run}" + ("" if params.head == "parent" else " + head"))
    if params.freeze == "features":
        freeze_features(model, head)
    return model
