"""Pluggable positional encodings for the transformer.

An encoding can act at three places: add to the token embeddings (absolute encodings), rotate
queries and keys (rotary), or add a bias to the attention scores (relative encodings). Each class
overrides the hooks it needs; the transformer calls all three. ``POSITIONAL`` maps the names a
model spec may use to the classes; Kazemnejad et al. (2023, catalogue #100) compare these.
"""

from __future__ import annotations

import math
from typing import Annotated

import torch
from pydantic import AfterValidator
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


class T5Relative(PositionalEncoding):
    """T5's learned relative bias (Raffel et al., 2020): one scalar per head and distance bucket.

    Causal distances ``i - j`` fall in ``n_buckets`` buckets, exact below ``n_buckets // 2`` and
    log-spaced up to ``max_distance``; longer distances share the last bucket, so any length works.
    """

    def __init__(
        self, d_model: int, n_heads: int, max_len: int, n_buckets: int = 32, max_distance: int = 128
    ) -> None:
        super().__init__(d_model, n_heads, max_len)
        self.n_buckets, self.max_distance = n_buckets, max_distance
        self.bias = nn.Embedding(n_buckets, n_heads)
        nn.init.zeros_(self.bias.weight)

    def buckets(self, length: int) -> Tensor:
        pos = torch.arange(length, device=self.bias.weight.device)
        dist = (pos[:, None] - pos[None, :]).clamp(min=0)
        exact = self.n_buckets // 2
        scale = math.log(self.max_distance / exact)
        log_ratio = torch.log(dist.clamp(min=1).float() / exact) / scale
        far = (exact + log_ratio * (self.n_buckets - exact)).long().clamp(max=self.n_buckets - 1)
        return torch.where(dist < exact, dist, far)

    def attention_bias(self, length: int) -> Tensor:
        return self.bias(self.buckets(length)).permute(2, 0, 1)  # (heads, T, T)


class ALiBi(PositionalEncoding):
    """Attention with linear biases (Press et al., 2022): head ``h`` adds ``-m_h (i - j)``.

    Slopes ``m_h`` form the geometric sequence ``2^(-8 (h + 1) / n_heads)`` of the paper.
    """

    def __init__(self, d_model: int, n_heads: int, max_len: int) -> None:
        super().__init__(d_model, n_heads, max_len)
        slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / n_heads) for h in range(n_heads)])
        self.register_buffer("slopes", slopes, persistent=False)

    def attention_bias(self, length: int) -> Tensor:
        pos = torch.arange(length, device=self.slopes.device, dtype=self.slopes.dtype)
        dist = (pos[:, None] - pos[None, :]).clamp(min=0)
        return -self.slopes[:, None, None] * dist  # (heads, T, T)


class Rotary(PositionalEncoding):
    """Rotary position embeddings (RoPE, Su et al., 2021): rotate query/key pairs by position.

    Channel pairs ``(2i, 2i + 1)`` of each head turn by ``pos * 10000^(-2i / d_head)``.
    """

    def __init__(self, d_model: int, n_heads: int, max_len: int, base: float = 10000.0) -> None:
        super().__init__(d_model, n_heads, max_len)
        d_head = d_model // n_heads
        if d_head % 2:
            raise ValueError(f"rotary needs an even head size, got d_model/n_heads = {d_head}")
        inv = base ** (-torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)
        self.register_buffer("inv_freq", inv.float(), persistent=False)

    def _turn(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)

    def rotate(self, q: Tensor, k: Tensor) -> tuple[Tensor, Tensor]:
        pos = torch.arange(q.shape[-2], device=q.device, dtype=self.inv_freq.dtype)
        angle = (pos[:, None] * self.inv_freq[None, :]).to(q.dtype)
        cos, sin = angle.cos(), angle.sin()
        return self._turn(q, cos, sin), self._turn(k, cos, sin)


class FIRE(PositionalEncoding):
    """Functional interpolation for relative positions (FIRE; Li et al. 2023, used for addition by
    Zhou et al., #42): head ``h`` adds ``b_h(i, j) = f(psi(i - j) / psi(max(L, i)))`` with
    ``psi(x) = log(c x + 1)``, ``f`` a small MLP (1 -> ``hidden`` -> ReLU -> one output per head),
    and learnable ``c`` (init 0.1) and threshold ``L`` (init 512), both used through ``abs``.

    Dividing by ``psi(max(L, i))`` maps every query's distances into ``[0, 1]``, so the bias is
    defined, and interpolates, at any length; below the threshold ``L`` it is a learned function
    of the log-distance alone. ``i`` is the 0-based query position.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        max_len: int,
        hidden: int = 32,
        c: float = 0.1,
        threshold: float = 512.0,
    ) -> None:
        super().__init__(d_model, n_heads, max_len)
        self.mlp = nn.Sequential(nn.Linear(1, hidden), nn.ReLU(), nn.Linear(hidden, n_heads))
        self.c = nn.Parameter(torch.tensor(float(c)))
        self.threshold = nn.Parameter(torch.tensor(float(threshold)))

    def attention_bias(self, length: int) -> Tensor:
        c = self.c.abs()
        pos = torch.arange(length, device=self.c.device, dtype=self.c.dtype)
        dist = (pos[:, None] - pos[None, :]).clamp(min=0)
        norm = torch.log(c * torch.maximum(pos, self.threshold.abs()) + 1)  # (T,) per query
        ratio = torch.log(c * dist + 1) / norm.clamp(min=1e-6)[:, None]
        return self.mlp(ratio.unsqueeze(-1)).permute(2, 0, 1)  # (heads, T, T)


class HardALiBi(PositionalEncoding):
    """Hard-ALiBi (Jelassi et al. 2024, "Repeat after me", the encoding of Hou et al.'s Turing
    programs, #87): ALiBi's linear penalty replaced by a hard window. As in Jelassi et al.'s code
    (``num_masked_heads``, half the heads by default), head ``h < n_heads // 2`` (at least one)
    attends only to the last ``h + 1`` tokens (itself included); the other heads carry no
    positional information (NoPE). The bias is 0 inside a window and ``-inf`` outside.
    """

    def __init__(self, d_model: int, n_heads: int, max_len: int) -> None:
        super().__init__(d_model, n_heads, max_len)
        masked = max(1, n_heads // 2)
        window = [float(h + 1) for h in range(masked)] + [math.inf] * (n_heads - masked)
        self.register_buffer("window", torch.tensor(window), persistent=False)

    def attention_bias(self, length: int) -> Tensor:
        pos = torch.arange(length, device=self.window.device, dtype=self.window.dtype)
        dist = (pos[:, None] - pos[None, :]).clamp(min=0)
        inside = dist[None] < self.window[:, None, None]
        return torch.zeros_like(inside, dtype=self.window.dtype).masked_fill(~inside, -math.inf)


POSITIONAL: dict[str, type[PositionalEncoding]] = {
    "none": PositionalEncoding,
    "learned": LearnedAbsolute,
    "sinusoidal": Sinusoidal,
    "t5": T5Relative,
    "alibi": ALiBi,
    "rope": Rotary,
    "fire": FIRE,
    "hard_alibi": HardALiBi,
}


def known_positional(name: str) -> str:
    """Validate a positional-encoding name against ``POSITIONAL``."""
    if name not in POSITIONAL:
        raise ValueError(f"unknown positional encoding {name!r}; allowed: {', '.join(POSITIONAL)}")
    return name


PositionalName = Annotated[str, AfterValidator(known_positional)]
