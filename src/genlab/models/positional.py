"""Pluggable positional encodings for the transformer.

An encoding can act at three places: add to the token embeddings (absolute encodings), rotate
queries and keys (rotary), or add a bias to the attention scores (relative encodings). Each class
overrides the hooks it needs; the transformer calls all three. ``POSITIONAL`` maps the names a
model spec may use to the classes; Kazemnejad et al. (2023, catalogue #100) compare these.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


class PositionalEncoding(nn.Module):
    """No positional information at all (NoPE): causal attention alone tells order (#100)."""

    def __init__(self, d_model: int, n_heads: int, max_len: int) -> None:
        super().__init__()
        self.max_len = max_len

    def add_to_input(self, h: Tensor) -> Tensor:
        return h

    def rotate(self, q: Tensor, k: Tensor) -> tuple[Tensor, Tensor]:
        return q, k

    def attention_bias(self, length: int) -> Tensor | None:
        return None


class LearnedAbsolute(PositionalEncoding):
    """Learned absolute position embeddings (APE), as in GPT-2 and Power et al. (#55)."""

    def __init__(self, d_model: int, n_heads: int, max_len: int) -> None:
        super().__init__(d_model, n_heads, max_len)
        self.table = nn.Parameter(torch.randn(max_len, d_model) * 0.02)

    def add_to_input(self, h: Tensor) -> Tensor:
        return h + self.table[: h.shape[1]]


class Sinusoidal(PositionalEncoding):
    """Fixed sinusoidal position encodings of Vaswani et al. (2017)."""

    def __init__(self, d_model: int, n_heads: int, max_len: int) -> None:
        super().__init__(d_model, n_heads, max_len)
        pos = torch.arange(max_len).unsqueeze(1)
        freq = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        table = torch.zeros(max_len, d_model)
        table[:, 0::2] = torch.sin(pos * freq)
        table[:, 1::2] = torch.cos(pos * freq[: d_model // 2])
        self.register_buffer("table", table, persistent=False)

    def add_to_input(self, h: Tensor) -> Tensor:
        return h + self.table[: h.shape[1]]


POSITIONAL: dict[str, type[PositionalEncoding]] = {
    "none": PositionalEncoding,
    "learned": LearnedAbsolute,
    "sinusoidal": Sinusoidal,
}
