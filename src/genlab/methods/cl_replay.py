"""``replay``: experience replay with a bounded, experience-balanced buffer (Avalanche's
``Replay`` strategy; Chaudhry et al. 2019, "On tiny episodic memories in continual learning").
Each step trains on the current batch concatenated with as many examples drawn from the memory of
past experiences. The single-model baseline of Model Zoo (#120) at matched memory."""

from __future__ import annotations

from typing import Any

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch
from genlab.methods.cl_base import Continual
from genlab.methods.cl_buffer import ExperienceBuffer
from genlab.registry import Params


class ReplayParams(Params):
    """Params of ``replay``."""

    buffer_size: int = Field(200, ge=1, description="examples kept over all past experiences")


@METHODS.register("replay", ReplayParams, papers=(120,), family="continual")
class Replay(Continual):
    """Current batch + an equal-sized batch from the bounded memory of past experiences."""

    def __init__(self, params: ReplayParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        self.buffer = ExperienceBuffer(params.buffer_size)

    def before_experience(self, model: nn.Module, k: int) -> None:
        self.buffer.start(k)

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x, y = self.current(batches)
        e = torch.full((len(y),), self.exp)
        if self.exp > 0:
            xb, yb, eb = self.buffer.sample(len(y), list(range(self.exp)))
            x, y, e = torch.cat([x, xb]), torch.cat([y, yb]), torch.cat([e, eb])
        self.buffer.add(*self.current(batches), self.exp)
        return cross_entropy(self.masked(model(x), e), y), {"buffer": float(len(self.buffer))}

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "buffer": self.buffer.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        if "buffer" in state:
            self.buffer.load_state_dict(state["buffer"])
