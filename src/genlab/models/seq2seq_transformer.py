"""A transformer encoder-decoder you can read top to bottom, with a key/value cache for decoding.

Vaswani et al. (2017), pre-norm: the encoder attends over the source (padding masked), the decoder
attends causally over its own inputs, then over the encoder's output, then a GELU MLP. The model of
Zhou et al.'s data-factor study (#54) and Petty et al.'s depth study (#63) on SCAN. Positions are
sinusoidal (default; defined at any length, which the SCAN length split needs) or learned; source
positions count from the first real token of the left-padded source. ``start`` / ``step`` decode
one position at a time, reusing cached keys and values (see ``seq2seq.Seq2SeqBase``).
"""

from __future__ import annotations

import math
from typing import Literal

import torch
import torch.nn.functional as F
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.models.positional import Sinusoidal
from genlab.models.seq2seq import Seq2SeqBase
from genlab.registry import Params


class TransformerSeq2SeqParams(Params):
    """Params of ``seq2seq_transformer``."""

    d_model: int = Field(128, ge=1)
    n_heads: int = Field(4, ge=1)
    enc_layers: int = Field(2, ge=1, le=24)
    dec_layers: int = Field(2, ge=1, le=24)
    d_ff: int | None = Field(None, ge=1, description="MLP width; default 2 * d_model")
    dropout: float = Field(0.0, ge=0, lt=1)
    positional: Literal["sinusoidal", "learned"] = Field("sinusoidal", description="positions")


class Attention(nn.Module):
    """Multi-head attention of queries ``x`` over keys/values made by ``keys(memory)``."""

    def __init__(self, d: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.q, self.kv, self.out = nn.Linear(d, d), nn.Linear(d, 2 * d), nn.Linear(d, d)

    def keys(self, m: Tensor) -> tuple[Tensor, Tensor]:
        n, length, d = m.shape
        k, v = self.kv(m).view(n, length, 2, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        return k, v

    def forward(
        self, x: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, causal: bool = False
    ) -> Tensor:
        n, t, d = x.shape
        q = self.q(x).view(n, t, self.heads, d // self.heads).transpose(1, 2)
        p = self.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p, is_causal=causal)
        return self.out(y.transpose(1, 2).reshape(n, t, d))


def _mlp(d: int, ff: int, dropout: float) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d), nn.Dropout(dropout))


class EncoderBlock(nn.Module):
    def __init__(self, d: int, heads: int, ff: int, dropout: float) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn, self.mlp = Attention(d, heads, dropout), _mlp(d, ff, dropout)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        a = self.ln1(x)
        x = x + self.attn(a, *self.attn.keys(a), mask=mask)
        return x + self.mlp(self.ln2(x))


class DecoderBlock(nn.Module):
    def __init__(self, d: int, heads: int, ff: int, dropout: float) -> None:
        super().__init__()
        self.ln1, self.ln2, self.ln3 = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.self_attn, self.cross = Attention(d, heads, dropout), Attention(d, heads, dropout)
        self.mlp = _mlp(d, ff, dropout)

    def forward(
        self, x: Tensor, memory: tuple[Tensor, Tensor], mask: Tensor, cache: dict | None = None
    ) -> Tensor:
        a = self.ln1(x)
        k, v = self.self_attn.keys(a)
        if cache is not None:  # one new position: attend to every cached one and itself
            if "k" in cache:
                k, v = torch.cat([cache["k"], k], 2), torch.cat([cache["v"], v], 2)
            cache["k"], cache["v"] = k, v
        x = x + self.self_attn(a, k, v, causal=cache is None)
        x = x + self.cross(self.ln2(x), *memory, mask=mask)
        return x + self.mlp(self.ln3(x))


class TransformerSeq2Seq(Seq2SeqBase):
    """Embedding (std d^-1/2, scaled by sqrt(d)) + positions, encoder blocks, decoder blocks, read-out."""

    def __init__(self, p: TransformerSeq2SeqParams, info: TaskInfo) -> None:
        super().__init__(info)
        if p.d_model % p.n_heads:
            raise ValueError(f"d_model ({p.d_model}) must be divisible by n_heads ({p.n_heads})")
        self.d = p.d_model
        longest = int(info.extra.get("max_length", info.seq_len or 512))
        self.embed = nn.Embedding(info.vocab_size, p.d_model)
        # Vaswani et al. scale the embedding by sqrt(d), which assumes it starts at std d^-1/2
        # (tensor2tensor's init): torch's N(0, 1) would start the tokens sqrt(d) times louder
        # than the positions (8.5x at d = 72), and the decoder could barely tell them apart.
        nn.init.normal_(self.embed.weight, std=p.d_model**-0.5)
        if p.positional == "learned":
            self.pos = nn.Parameter(torch.randn(longest, p.d_model) * 0.02)
        else:
            self.register_buffer("pos", Sinusoidal(p.d_model, 1, longest).table, persistent=False)
        ff = p.d_ff or 2 * p.d_model
        self.enc = nn.ModuleList(
            EncoderBlock(p.d_model, p.n_heads, ff, p.dropout) for _ in range(p.enc_layers)
        )
        self.dec = nn.ModuleList(
            DecoderBlock(p.d_model, p.n_heads, ff, p.dropout) for _ in range(p.dec_layers)
        )
        self.ln_enc, self.ln_dec = nn.LayerNorm(p.d_model), nn.LayerNorm(p.d_model)
        self.readout = nn.Linear(p.d_model, info.n_outputs)

    def _encode(self, src: Tensor) -> tuple[list[tuple[Tensor, Tensor]], Tensor]:
        real = src != self.pad
        pos = (real.cumsum(1) - 1).clamp(min=0)  # left padding: count from the first word
        mask = real[:, None, None, :]
        h = self.embed(src) * math.sqrt(self.d) + self.pos[pos]
        for block in self.enc:
            h = block(h, mask)
        memory = self.ln_enc(h)
        return [block.cross.keys(memory) for block in self.dec], mask

    def decode(self, src: Tensor, dec: Tensor) -> Tensor:
        memory, mask = self._encode(src)
        h = self.embed(dec) * math.sqrt(self.d) + self.pos[: dec.shape[1]]
        for block, mem in zip(self.dec, memory, strict=True):
            h = block(h, mem, mask)
        return self.readout(self.ln_dec(h))

    def start(self, src: Tensor) -> dict:
        memory, mask = self._encode(src)
        return {"memory": memory, "mask": mask, "caches": [{} for _ in self.dec], "t": 0}

    def step(self, cache: dict, token: Tensor) -> Tensor:
        h = self.embed(token)[:, None] * math.sqrt(self.d) + self.pos[cache["t"]]
        for block, mem, c in zip(self.dec, cache["memory"], cache["caches"], strict=True):
            h = block(h, mem, cache["mask"], c)
        cache["t"] += 1
        return self.readout(self.ln_dec(h))[:, 0]


@MODELS.register(
    "seq2seq_transformer",
    TransformerSeq2SeqParams,
    papers=(54, 63),
    family="compositional",
    tiny={"d_model": 16, "n_heads": 2, "enc_layers": 1, "dec_layers": 1},
)
def seq2seq_transformer(params: TransformerSeq2SeqParams, info: TaskInfo) -> nn.Module:
    """Transformer encoder-decoder (Vaswani et al. 2017), as in Zhou et al. (#54), Petty et al. (#63)."""
    return TransformerSeq2Seq(params, info)
