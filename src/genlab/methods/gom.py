"""``gom``: fit a generalized occupancy model (GOMs, Zhu et al. 2024, #66): the mixture's negative
log-likelihood of the occupancy ``psi`` given the state, plus the readout policy's half squared
error on the data's action, summed (``readout_weight`` scales the second)."""

from __future__ import annotations

from typing import Any

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.errors import SpecError
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.registry import Params


class GomParams(Params):
    """Params of ``gom``."""

    readout_weight: float = Field(1.0, gt=0, le=1000, description="weight of the readout loss")


@METHODS.register("gom", GomParams, papers=(66,), family="control")
class Gom(Method):
    """Occupancy density NLL + readout behaviour cloning, on ``(s, psi) -> a`` data (#66)."""

    def __init__(self, params: GomParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        if info.kind != "regression":
            raise ValueError(f"method 'gom' needs a regression task, got kind {info.kind!r}")

    def wrap(self, model: nn.Module) -> nn.Module:
        if not callable(getattr(model, "nll", None)):
            raise SpecError(
                "method 'gom' trains an occupancy model with an nll(x) (gom_mdn), "
                f"got {type(model).__name__}"
            )
        return model

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x = torch.cat([b[0] for b in batches.values()])
        y = torch.cat([b[1] for b in batches.values()])
        nll = model.nll(x)
        bc = 0.5 * (model(x) - y.to(x.dtype)).pow(2).sum(-1).mean()
        return nll + self.params.readout_weight * bc, {"nll": nll.item(), "bc": bc.item()}
