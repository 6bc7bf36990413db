"""Recurrent sequence models of Delétang et al. (ICLR 2023, catalogue #62): a tanh RNN and an LSTM.

Every recurrent model here embeds tokens, runs over time, and maps the state at each position to
logits: ``(N, T, n_outputs)`` for sequence tasks, the last position for classification tasks.
``RecurrentBase`` holds that shared frame; the stack and tape models (``stack_rnn.py``,
``tape_rnn.py``) subclass it. Recurrent models have no built-in length limit; ``max_len`` (optional)
makes one, and a task whose longest input exceeds it is refused when the model is built.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params


class RecurrentParams(Params):
    """Params of ``rnn`` and ``lstm``."""

    hidden: int = Field(256, ge=1, description="state size (the paper uses 256)")
    embed_dim: int = Field(16, ge=1, description="token embedding size")
    max_len: int | None = Field(None, ge=1, description="refuse longer inputs; default no limit")


class RecurrentBase(nn.Module):
    """Embedding, a recurrence ``states(e, x) -> (N, T, hidden)``, and a linear read-out."""

    def __init__(self, p: RecurrentParams, info: TaskInfo, hidden: int) -> None:
        super().__init__()
        if info.vocab_size is None:
            raise ValueError(f"{type(self).__name__} needs a token task (info.vocab_size)")
        longest = info.extra.get("max_length")
        if p.max_len is not None and longest is not None and p.max_len < longest:
            raise ValueError(
                f"model.params.max_len ({p.max_len}) is below the task's longest input ({longest})"
            )
        self.max_len = p.max_len
        self.last_only = info.kind == "classification"
        self.first_symbol = int(info.extra.get("first_symbol", 0))
        self.embed = nn.Embedding(info.vocab_size, p.embed_dim)
        self.readout = nn.Linear(hidden, info.n_outputs)

    def states(self, e: Tensor, x: Tensor) -> Tensor:
        raise NotImplementedError

    def forward(self, x: Tensor) -> Tensor:
        if self.max_len is not None and x.shape[1] > self.max_len:
            raise ValueError(
                f"input length {x.shape[1]} exceeds the model's max_len {self.max_len}"
            )
        logits = self.readout(self.states(self.embed(x), x))
        return logits[:, -1] if self.last_only else logits


class RNN(RecurrentBase):
    """Elman RNN with tanh units (``torch.nn.RNN``, fused over time)."""

    def __init__(self, p: RecurrentParams, info: TaskInfo, cell: Literal["rnn", "lstm"]) -> None:
        super().__init__(p, info, p.hidden)
        layer = nn.LSTM if cell == "lstm" else nn.RNN
        self.rnn = layer(p.embed_dim, p.hidden, batch_first=True)

    def states(self, e: Tensor, x: Tensor) -> Tensor:
        return self.rnn(e)[0]


@MODELS.register("rnn", RecurrentParams, papers=(62,), tiny={"hidden": 16, "embed_dim": 4})
def rnn(params: RecurrentParams, info: TaskInfo) -> nn.Module:
    """Vanilla tanh RNN (Delétang et al., #62): solves regular tasks only."""
    return RNN(params, info, "rnn")


@MODELS.register("lstm", RecurrentParams, papers=(62,), tiny={"hidden": 16, "embed_dim": 4})
def lstm(params: RecurrentParams, info: TaskInfo) -> nn.Module:
    """LSTM (Hochreiter & Schmidhuber) as in Delétang et al. (#62): regular, counter tasks."""
    return RNN(params, info, "lstm")
