"""Tape-augmented RNN of Delétang et al. (ICLR 2023, catalogue #62).

An RNN controller reads the input and the tape cell under the head. At each step it emits softmax
weights over five actions, each of which writes ``tanh(W h)`` under the head and then moves it:
STAY, LEFT, RIGHT, and JUMP-LEFT / JUMP-RIGHT by the input length ``L`` (the paper's code writes on
every action, jumps included). The tape is kept with the head at cell 0 and moved by rolling it;
the new tape is the action-weighted mix. ``L`` is the number of input tokens (tokens
``>= first_symbol``) of each sequence, so jumps are per-sample gathers, batched; the only Python
loop is over time steps. The tape is a ring of ``memory_size`` cells (default the task's longest
input + 1; with ``memory_per_input``, each batch's input length + 1). Differences from the
paper's code: the written vector is ``tanh(W h)`` (theirs comes from a two-layer MLP), and the
read-out sees the controller state and the cell under the head *after* the step's action (theirs
reads ``h`` only). With the paper's read-out no one-hot policy
reaches the first symbol of duplicate string's second copy (it would need a move of ``-(L - 1)``);
reading after the action lets a pass answer in the step it moves.
"""

from __future__ import annotations

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.models.rnn import RecurrentBase
from genlab.models.stack_rnn import Controller, StackRNNParams, cells_for, memory_cells


class TapeRNNParams(StackRNNParams):
    """Params of ``tape_rnn`` (``stack_dim`` is the size of a tape cell, ``memory_size`` the
    number of cells)."""

    stack_dim: int = Field(8, ge=1, description="size of a tape cell (the paper uses 8)")


def _shift(tape: Tensor, by: Tensor) -> Tensor:
    """``out[n, i] = tape[n, (i + by[n]) % M]``: the head moves ``by[n]`` cells to the right."""
    m = tape.shape[1]
    idx = (torch.arange(m, device=tape.device)[None, :] + by[:, None]) % m
    return tape.gather(1, idx[:, :, None].expand(-1, -1, tape.shape[2]))


def tape_update(tape: Tensor, a: Tensor, v: Tensor, length: Tensor) -> Tensor:
    """The tape after writing ``v`` under the head (cell 0) and moving it by 0, -1, +1, -L or +L
    cells, mixed by the action weights ``a`` ``(n, 5)``; ``length`` holds each row's ``L``."""
    a = a[:, :, None, None]
    written = torch.cat([v[:, None], tape[:, 1:]], dim=1)
    return (
        a[:, 0] * written
        + a[:, 1] * written.roll(1, dims=1)  # head one cell left
        + a[:, 2] * written.roll(-1, dims=1)  # head one cell right
        + a[:, 3] * _shift(written, -length)
        + a[:, 4] * _shift(written, length)
    )


class TapeRNN(RecurrentBase):
    """Controller + differentiable tape with jumps; see the module docstring."""

    def __init__(self, p: TapeRNNParams, info: TaskInfo) -> None:
        super().__init__(p, info, p.hidden + p.stack_dim)
        self.ctrl = Controller(p.embed_dim + p.stack_dim, p.hidden, p.controller)
        self.actions = nn.Linear(p.hidden, 5)
        self.write_value = nn.Linear(p.hidden, p.stack_dim)
        self.cell_dim = p.stack_dim
        self.cells = self.fixed_cells = memory_cells(p, info)
        self.per_input = p.memory_per_input

    def states(self, e: Tensor, x: Tensor) -> Tensor:
        n, t, _ = e.shape
        length = (x >= self.first_symbol).sum(1) if self.first_symbol else x.new_full((n,), t)
        tape = e.new_zeros(n, cells_for(self, t), self.cell_dim)
        state = self.ctrl.init(n, e)
        out = []
        for i in range(t):
            h, state = self.ctrl(torch.cat([e[:, i], tape[:, 0]], dim=1), state)
            a = torch.softmax(self.actions(h), dim=-1)
            tape = tape_update(tape, a, torch.tanh(self.write_value(h)), length)
            out.append(torch.cat([h, tape[:, 0]], dim=1))  # read-out also sees the new head cell
        return torch.stack(out, dim=1)


@MODELS.register("tape_rnn", TapeRNNParams, papers=(62,), tiny={"hidden": 16, "embed_dim": 4})
def tape_rnn(params: TapeRNNParams, info: TaskInfo) -> nn.Module:
    """RNN with a differentiable tape and input-length jumps (Delétang et al., #62)."""
    return TapeRNN(params, info)
