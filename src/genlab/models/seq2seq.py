"""Encoder-decoder models for source -> target tasks (SCAN and the compositional generators).

Models here read a row in the layout of ``tasks/seq2seq_common.py`` (source left-padded to
``info.extra["src_len"]``, then the teacher-forced decoder input) and return logits over the whole
row, zeros on the source columns, so they train with the same loss and score with the same exact
match as any sequence task. Besides ``forward`` they decode incrementally: ``start(src)`` encodes
once and ``step(cache, token)`` gives the next position's logits, which the greedy decoder
(``probes/exact_match.py``) uses to run free in O(length).

``seq2seq_rnn`` is the LSTM or GRU encoder-decoder, the family of Lake & Baroni's SCAN baselines
(2018) that Zhou, Jiang & Bansal (#54) and Han & Padó (#57) start from, here with Luong-style global attention (the decoder state queries the encoder states;
``[state; context] -> tanh -> logits``) or none. The transformer encoder-decoder is in
``seq2seq_transformer.py``; the decoder-only variant (in-context episodes, #57) is the registered
``transformer``, which reads the same row as one causal sequence.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params


class Seq2SeqBase(nn.Module):
    """Splits a row into source and decoder input, trims all-padding decoder columns, and pads
    the decoder logits back to the row (zeros where nothing is predicted)."""

    def __init__(self, info: TaskInfo) -> None:
        super().__init__()
        if info.extra.get("layout") != "seq2seq" or info.vocab_size is None:
            raise ValueError(
                f"{type(self).__name__} needs a source -> target task (info.extra layout "
                "'seq2seq'), such as scan"
            )
        self.src_len = int(info.extra["src_len"])
        self.pad = int(info.extra["pad"])
        self.n_out = info.n_outputs

    def decode(self, src: Tensor, dec: Tensor) -> Tensor:
        """Logits ``(N, T, n_outputs)`` of the decoder inputs ``dec`` given the source."""
        raise NotImplementedError

    def start(self, src: Tensor) -> dict:
        """Encode the source; the cache that ``step`` reads and extends."""
        raise NotImplementedError

    def step(self, cache: dict, token: Tensor) -> Tensor:
        """Logits ``(N, n_outputs)`` of the next position after feeding ``token`` ``(N,)``."""
        raise NotImplementedError

    def forward(self, x: Tensor) -> Tensor:
        src, dec = x[:, : self.src_len], x[:, self.src_len :]
        used = (dec != self.pad).any(0).nonzero()
        width = int(used.max()) + 1 if len(used) else 1
        logits = self.decode(src, dec[:, :width])
        out = logits.new_zeros(x.shape[0], x.shape[1], self.n_out)
        out[:, self.src_len : self.src_len + width] = logits
        return out


class RNNSeq2SeqParams(Params):
    """Params of ``seq2seq_rnn``."""

    cell: Literal["lstm", "gru"] = Field("lstm", description="recurrent cell")
    hidden: int = Field(128, ge=1, description="state size of encoder and decoder")
    embed_dim: int = Field(64, ge=1, description="token embedding size")
    layers: int = Field(1, ge=1, le=8)
    dropout: float = Field(0.0, ge=0, lt=1, description="between layers and on embeddings")
    attention: bool = Field(True, description="Luong global attention over the encoder states")


class RNNSeq2Seq(Seq2SeqBase):
    """Recurrent encoder-decoder; the decoder starts from the encoder's final state."""

    def __init__(self, p: RNNSeq2SeqParams, info: TaskInfo) -> None:
        super().__init__(info)
        rnn = nn.LSTM if p.cell == "lstm" else nn.GRU
        drop = p.dropout if p.layers > 1 else 0.0
        self.embed = nn.Embedding(info.vocab_size, p.embed_dim)
        self.drop = nn.Dropout(p.dropout)
        self.encoder = rnn(p.embed_dim, p.hidden, p.layers, batch_first=True, dropout=drop)
        self.decoder = rnn(p.embed_dim, p.hidden, p.layers, batch_first=True, dropout=drop)
        self.attention = p.attention
        if p.attention:
            self.score = nn.Linear(p.hidden, p.hidden, bias=False)  # Luong "general" score
            self.combine = nn.Linear(2 * p.hidden, p.hidden)
        self.readout = nn.Linear(p.hidden, info.n_outputs)

    def _read(self, h: Tensor, enc: Tensor, src_pad: Tensor) -> Tensor:
        if self.attention:
            scores = torch.einsum("nth,nsh->nts", self.score(h), enc)
            scores = scores.masked_fill(src_pad.unsqueeze(1), float("-inf"))
            context = torch.einsum("nts,nsh->nth", scores.softmax(-1), enc)
            h = torch.tanh(self.combine(torch.cat([h, context], -1)))
        return self.readout(self.drop(h))

    def decode(self, src: Tensor, dec: Tensor) -> Tensor:
        enc, state = self.encoder(self.drop(self.embed(src)))
        h, _ = self.decoder(self.drop(self.embed(dec)), state)
        return self._read(h, enc, src == self.pad)

    def start(self, src: Tensor) -> dict:
        enc, state = self.encoder(self.embed(src))
        return {"enc": enc, "pad": src == self.pad, "state": state}

    def step(self, cache: dict, token: Tensor) -> Tensor:
        h, cache["state"] = self.decoder(self.embed(token).unsqueeze(1), cache["state"])
        return self._read(h, cache["enc"], cache["pad"])[:, 0]


@MODELS.register(
    "seq2seq_rnn",
    RNNSeq2SeqParams,
    papers=(54, 57),
    family="compositional",
    tiny={"hidden": 16, "embed_dim": 8},
)
def seq2seq_rnn(params: RNNSeq2SeqParams, info: TaskInfo) -> nn.Module:
    """LSTM/GRU encoder-decoder with attention, the SCAN baselines' family (Lake & Baroni 2018)."""
    return RNNSeq2Seq(params, info)
