"""Random networks of one architecture choice, the protocol of "Neural Redshift" (Teney et al.,
CVPR 2024, catalogue #85): built by the ``random_mlp`` model and sampled by the
``function_complexity`` probe (``genlab.probes.complexity``). Registers nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn

Activation = Literal["relu", "tanh", "gelu", "sin", "square"]


class _Sin(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return torch.sin(x)


class _Square(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return x * x


ACTS = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU, "sin": _Sin, "square": _Square}


@dataclass(frozen=True)
class Arch:
    """One architecture choice: ``depth`` hidden blocks of ``width`` units with ``activation``;
    a block is ``h <- [h +] act(W [LN](h) + b)`` (``+`` when ``residual``, ``LN`` when
    ``layer_norm``, no affine). Weights and biases ~ N(0, (``scale``)² / fan_in)."""

    activation: Activation = "relu"
    depth: int = 4
    width: int = 64
    residual: bool = False
    layer_norm: bool = False
    scale: float = 1.0

    def label(self) -> str:
        parts = [self.activation, f"d{self.depth}", f"s{self.scale:g}"]
        parts += ["res"] * self.residual + ["ln"] * self.layer_norm
        return "-".join(parts)


class RandomNet(nn.Module):
    """The network of an ``Arch`` with input dimension ``d_in`` and ``d_out`` outputs."""

    def __init__(self, arch: Arch, d_in: int, gen: torch.Generator, d_out: int = 1) -> None:
        super().__init__()
        if arch.depth < 1 or arch.width < 1 or arch.scale <= 0:
            raise ValueError("Arch: depth and width must be >= 1 and scale > 0")
        if arch.activation not in ACTS:
            raise ValueError(f"Arch.activation: {arch.activation!r}; allowed: {', '.join(ACTS)}")
        self.arch = arch
        self.inp = self._linear(d_in, arch.width, gen)
        self.blocks = nn.ModuleList(
            self._linear(arch.width, arch.width, gen) for _ in range(arch.depth - 1)
        )
        self.out = self._linear(arch.width, d_out, gen)
        self.act = ACTS[arch.activation]()

    def _linear(self, d_in: int, d_out: int, gen: torch.Generator) -> nn.Linear:
        lin = nn.Linear(d_in, d_out, dtype=torch.float64)
        std = self.arch.scale / math.sqrt(d_in)
        with torch.no_grad():
            lin.weight.copy_(torch.randn(d_out, d_in, generator=gen, dtype=torch.float64) * std)
            lin.bias.copy_(torch.randn(d_out, generator=gen, dtype=torch.float64) * std)
        return lin

    def _norm(self, h: Tensor) -> Tensor:
        return nn.functional.layer_norm(h, h.shape[-1:]) if self.arch.layer_norm else h

    def forward(self, x: Tensor) -> Tensor:
        h = self.act(self.inp(x))
        for blk in self.blocks:
            z = self.act(blk(self._norm(h)))
            h = h + z if self.arch.residual else z
        out = self.out(self._norm(h))
        return out.squeeze(-1) if out.shape[-1] == 1 else out
