"""Stack-augmented RNN (Joulin & Mikolov, 2015) as used by Delétang et al. (ICLR 2023, #62).

An RNN controller reads the input and the top of a differentiable stack. At each step it emits
softmax weights over three actions (PUSH a new vector ``tanh(W h)``, POP, NO-OP) and the stack
becomes their weighted mix. The stack has a fixed depth, ``memory_size`` cells, as in the paper's
code (``stack_size``, 30 there): a push onto a full stack drops the bottom cell. By default the depth
is the task's longest input + 1, so it never overflows on the task's own splits; with
``memory_per_input`` it is each batch's input length + 1 instead (it never overflows either, and a
short training batch does not pay for the longest test input's cells). The update is
batched; the only Python loop is over time steps. Differences from the paper's code: the pushed
vector goes through ``tanh`` (theirs is linear) and the read-out is linear in ``h`` (theirs is
``Linear(relu(h))``).
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.models.rnn import RecurrentBase, RecurrentParams


class StackRNNParams(RecurrentParams):
    """Params of ``stack_rnn``."""

    stack_dim: int = Field(8, ge=1, description="size of a stack cell (the paper uses 8)")
    controller: Literal["rnn", "lstm"] = Field("rnn", description="controller cell")
    memory_size: int | None = Field(
        None, ge=1, description="memory cells; default the task's longest input + 1"
    )
    memory_per_input: bool = Field(
        False,
        description="cells = each batch's input length + 1 (never overflows; short "
        "training inputs then do not pay for the longest test input's memory)",
    )


def memory_cells(p: StackRNNParams, info: TaskInfo) -> int:
    """The fixed memory size: ``memory_size``, else the task's longest input + 1."""
    return p.memory_size or int(info.extra.get("max_length") or info.seq_len or 64) + 1


def cells_for(model: nn.Module, t: int) -> int:
    """The memory cells for an input of ``t`` steps: ``t + 1`` with ``memory_per_input``, else
    the model's fixed size."""
    return t + 1 if model.per_input else model.fixed_cells


class Controller(nn.Module):
    """One step of an RNN or LSTM cell with state kept as a tuple."""

    def __init__(self, d_in: int, hidden: int, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.cell = nn.LSTMCell(d_in, hidden) if kind == "lstm" else nn.RNNCell(d_in, hidden)
        self.hidden = hidden

    def init(self, n: int, like: Tensor) -> tuple[Tensor, ...]:
        z = like.new_zeros(n, self.hidden)
        return (z, z) if self.kind == "lstm" else (z,)

    def forward(self, x: Tensor, state: tuple[Tensor, ...]) -> tuple[Tensor, tuple[Tensor, ...]]:
        if self.kind == "lstm":
            h, c = self.cell(x, state)  # type: ignore[arg-type]
            return h, (h, c)
        h = self.cell(x, state[0])
        return h, (h,)


def stack_update(stack: Tensor, a: Tensor, v: Tensor) -> Tensor:
    """The stack after PUSH ``v``, POP and NO-OP mixed by the action weights ``a`` ``(n, 3)``;
    ``stack`` is ``(n, depth, d)`` with the top at cell 0, and a push drops the bottom cell."""
    a = a[:, :, None, None]
    pushed = torch.cat([v[:, None], stack[:, :-1]], dim=1)
    popped = torch.cat([stack[:, 1:], torch.zeros_like(stack[:, :1])], dim=1)
    return a[:, 0] * pushed + a[:, 1] * popped + a[:, 2] * stack


class StackRNN(RecurrentBase):
    """Controller + differentiable stack; see the module docstring."""

    def __init__(self, p: StackRNNParams, info: TaskInfo) -> None:
        super().__init__(p, info, p.hidden)
        self.ctrl = Controller(p.embed_dim + p.stack_dim, p.hidden, p.controller)
        self.actions = nn.Linear(p.hidden, 3)
        self.push_value = nn.Linear(p.hidden, p.stack_dim)
        self.stack_dim = p.stack_dim
        self.depth = self.fixed_cells = memory_cells(p, info)
        self.per_input = p.memory_per_input

    def states(self, e: Tensor, x: Tensor) -> Tensor:
        n, t, _ = e.shape
        stack = e.new_zeros(n, cells_for(self, t), self.stack_dim)
        state = self.ctrl.init(n, e)
        out = []
        for i in range(t):
            h, state = self.ctrl(torch.cat([e[:, i], stack[:, 0]], dim=1), state)
            out.append(h)
            a = torch.softmax(self.actions(h), dim=-1)
            stack = stack_update(stack, a, torch.tanh(self.push_value(h)))
        return torch.stack(out, dim=1)


@MODELS.register("stack_rnn", StackRNNParams, papers=(62,), tiny={"hidden": 16, "embed_dim": 4})
def stack_rnn(params: StackRNNParams, info: TaskInfo) -> nn.Module:
    """RNN with a differentiable stack (Joulin & Mikolov 2015; Delétang et al., #62)."""
    return StackRNN(params, info)
