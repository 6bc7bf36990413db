"""Tape-augmented RNN of Delétang et al. (ICLR 2023, catalogue #62).

An RNN controller reads the input and the tape cell under the head. At each step it emits softmax
weights over five actions: WRITE-STAY, WRITE-LEFT, WRITE-RIGHT (write ``tanh(W h)`` under the head,
then move), JUMP-LEFT and JUMP-RIGHT (move by the input length ``L``, no write). The tape is kept
with the head at cell 0 and moved by rolling it; the new tape is the action-weighted mix. ``L`` is
the number of input tokens (tokens ``>= first_symbol``) of each sequence, so jumps are per-sample
gathers, batched; the only Python loop is over time steps. The tape has ``T + 1`` cells. The
read-out sees the controller state and the cell under the head after the step's action (our
choice: with the ``±1``/``±L`` moves it lets a pass over the tape answer in the step it jumps).
"""

from __future__ import annotations

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.models import MODELS
from genlab.models.rnn import RecurrentBase
from genlab.models.stack_rnn import Controller, StackRNNParams
from genlab.tasks.base import TaskInfo


class TapeRNNParams(StackRNNParams):
    """Params of ``tape_rnn`` (``stack_dim`` is the size of a tape cell)."""

    stack_dim: int = Field(8, ge=1, description="size of a tape cell (the paper uses 8)")


def _shift(tape: Tensor, by: Tensor) -> Tensor:
    """``out[n, i] = tape[n, (i + by[n]) % M]``: the head moves ``by[n]`` cells to the right."""
    m = tape.shape[1]
    idx = (torch.arange(m, device=tape.device)[None, :] + by[:, None]) % m
    return tape.gather(1, idx[:, :, None].expand(-1, -1, tape.shape[2]))


class TapeRNN(RecurrentBase):
    """Controller + differentiable tape with jumps; see the module docstring."""

    def __init__(self, p: TapeRNNParams, info: TaskInfo) -> None:
        super().__init__(p, info, p.hidden + p.stack_dim)
        self.ctrl = Controller(p.embed_dim + p.stack_dim, p.hidden, p.controller)
        self.actions = nn.Linear(p.hidden, 5)
        self.write_value = nn.Linear(p.hidden, p.stack_dim)
        self.cell_dim = p.stack_dim

    def states(self, e: Tensor, x: Tensor) -> Tensor:
        n, t, _ = e.shape
        length = (x >= self.first_symbol).sum(1) if self.first_symbol else x.new_full((n,), t)
        tape = e.new_zeros(n, t + 1, self.cell_dim)
        state = self.ctrl.init(n, e)
        one = torch.ones_like(length)
        out = []
        for i in range(t):
            h, state = self.ctrl(torch.cat([e[:, i], tape[:, 0]], dim=1), state)
            out.append(h)
            a = torch.softmax(self.actions(h), dim=-1)[:, :, None, None]
            v = torch.tanh(self.write_value(h))
            written = torch.cat([v[:, None], tape[:, 1:]], dim=1)
            tape = (
                a[:, 0] * written
                + a[:, 1] * written.roll(1, dims=1)  # head one cell left
                + a[:, 2] * written.roll(-1, dims=1)  # head one cell right
                + a[:, 3] * _shift(tape, -length)
                + a[:, 4] * _shift(tape, length * one)
            )
            out[-1] = torch.cat([h, tape[:, 0]], dim=1)  # read-out also sees the new head cell
        return torch.stack(out, dim=1)


@MODELS.register("tape_rnn", TapeRNNParams, papers=(62,), tiny={"hidden": 16, "embed_dim": 4})
def tape_rnn(params: TapeRNNParams, info: TaskInfo) -> nn.Module:
    """RNN with a differentiable tape and input-length jumps (Delétang et al., #62)."""
    return TapeRNN(params, info)
