"""Complexity of the function a network computes: the measures of "Neural Redshift" (Teney et al.,
CVPR 2024, catalogue #85).

A network is evaluated on a 2-D grid of inputs and its output map is scored by

- ``fourier_complexity``: the mean radial frequency of the map's 2-D Fourier transform (mean
  removed), weighted by power, as a fraction of the highest frequency on the grid: 0 for a
  constant map, about 0.55 for i.i.d. noise. Deviation from the paper (which weights by
  amplitude): the map is Hann-windowed and weighted by power, because grid maps are not periodic
  and the FFT's edge leakage otherwise puts every smooth map near 0.25 (measured: ReLU 0.26 vs
  tanh at weight scale 4 0.29 unwindowed; 0.05 vs 0.10 windowed).
- ``lz_complexity``: the Lempel-Ziv (LZ76, Kaspar & Schuster) phrase count of the map thresholded
  at its median and read row by row, divided by ``n / log2 n``, the phrase count of random bits
  (compressibility: ~1 for noise, near 0 for a map with a few large regions).

Two entry points:

- ``sample_complexity(arch, ...)``: the distribution of both measures over random initialisations
  of one architecture choice (``Arch``: activation, depth, width, residual, layer norm, weight
  scale) on the grid ``[-1, 1]^2`` (the paper's protocol, scalar output).
- the ``function_complexity`` probe: the same measures for the model being trained, on the plane
  through three training inputs (the grid spans ``[-0.5, 1.5]`` in plane coordinates, so the
  three points sit inside it); each output logit (centred) is one map, the reported values are
  averages over logits. Metrics under the ``model`` split, so the zoo can rank them. With
  ``inputs="grid"`` it scores the first logit on the task's own grid (task ``plane_grid``, model
  ``random_mlp``): ``sample_complexity`` one network per run, so the numbers reach the store.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.errors import SpecError
from genlab.models.random_net import Arch, RandomNet
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import Params


def lz76(seq: np.ndarray) -> int:
    """Number of phrases of the Lempel-Ziv (1976) parsing of a sequence of symbols, by the
    Kaspar & Schuster algorithm (any alphabet)."""
    s = list(np.asarray(seq).ravel())
    n = len(s)
    if n < 2:
        return n
    c, i, k, k_max, j = 1, 0, 1, 1, 1
    while True:
        if s[i + k - 1] == s[j + k - 1]:
            k += 1
            if j + k > n:
                c += 1
                break
        else:
            k_max = max(k, k_max)
            i += 1
            if i == j:
                c += 1
                j += k_max
                if j + 1 > n:
                    break
                i, k, k_max = 0, 1, 1
            else:
                k = 1
    return c


def lz_complexity(values: np.ndarray) -> float:
    """LZ76 phrase count of ``values`` thresholded at their median (row-major), over
    ``n / log2 n``."""
    v = np.asarray(values, dtype=float).ravel()
    bits = (v > np.median(v)).astype(np.int8)
    n = len(bits)
    return lz76(bits) / (n / math.log2(n))


def fourier_complexity(grid: np.ndarray) -> float:
    """Power-weighted mean radial frequency of a 2-D map (mean removed, Hann-windowed), over the
    grid's largest radial frequency ``sqrt(2) * n / 2``; 0 for a constant map."""
    g = np.asarray(grid, dtype=float)
    g = g - g.mean()
    g = g * np.hanning(g.shape[0])[:, None] * np.hanning(g.shape[1])[None, :]
    power = np.abs(np.fft.fft2(g)) ** 2
    fy = np.fft.fftfreq(g.shape[0]) * g.shape[0]
    fx = np.fft.fftfreq(g.shape[1]) * g.shape[1]
    radius = np.sqrt(fy[:, None] ** 2 + fx[None, :] ** 2)
    total = power.sum()
    if not np.isfinite(total) or total <= 1e-24 * max(1.0, float(np.abs(g).max()) ** 2) * g.size:
        return 0.0
    return float((power * radius).sum() / total / (math.sqrt(2) * max(g.shape) / 2))


def grid_2d(n: int, lo: float = -1.0, hi: float = 1.0) -> Tensor:
    """``n * n`` points of ``[lo, hi]^2``, row-major (shape ``(n*n, 2)``)."""
    t = torch.linspace(lo, hi, n, dtype=torch.float64)
    u, v = torch.meshgrid(t, t, indexing="ij")
    return torch.stack([u.ravel(), v.ravel()], 1)


def sample_complexity(
    arch: Arch,
    samples: int,
    seed: int = 0,
    grid: int = 32,
    measures: tuple[str, ...] = ("fourier", "lz"),
) -> dict[str, np.ndarray]:
    """``measures`` (``fourier``, ``lz``) of ``samples`` random networks of ``arch`` on a
    ``grid x grid`` lattice of ``[-1, 1]^2`` (network ``i`` drawn from seed ``(seed, i)``)."""
    score = {"fourier": fourier_complexity, "lz": lz_complexity}
    bad = [m for m in measures if m not in score]
    if bad:
        raise ValueError(f"measures: unknown {bad}; allowed: fourier, lz")
    x = grid_2d(grid)
    out = {m: np.empty(samples) for m in measures}
    for i in range(samples):
        gen = torch.Generator().manual_seed(1_000_003 * seed + i)
        with torch.no_grad():
            y = RandomNet(arch, 2, gen)(x).numpy().reshape(grid, grid)
        for m in measures:
            out[m][i] = score[m](y)
    return out


# ---- the probe ---------------------------------------------------------------------------------


class ComplexityParams(Params):
    """Params of ``function_complexity``."""

    grid: int = Field(32, ge=4, le=256, description="grid points per side of the input plane")
    planes: int = Field(4, ge=1, description="random planes (triples of training inputs)")
    split: str = Field("train/main", description="split whose inputs span the planes")
    inputs: Literal["planes", "grid"] = Field(
        "planes",
        description="'grid': the split's inputs are the square grid itself (task "
        "plane_grid) and the map is the first logit, the paper's protocol",
    )


def plane_inputs(x: Tensor, idx: Tensor, n: int) -> Tensor:
    """``n * n`` inputs on the plane through ``x[idx[0]], x[idx[1]], x[idx[2]]`` at plane
    coordinates ``[-0.5, 1.5]^2`` (row-major), shaped like ``x``'s rows."""
    a, b, c = (x[i].to(torch.float64) for i in idx[:3])
    uv = grid_2d(n, -0.5, 1.5)
    flat = a.ravel() + uv[:, :1] * (b - a).ravel() + uv[:, 1:] * (c - a).ravel()
    return flat.reshape(n * n, *x.shape[1:]).to(x.dtype)


def model_complexity(
    model: nn.Module, x: Tensor, params: ComplexityParams, gen: torch.Generator
) -> dict[str, float]:
    """Mean ``fourier_complexity`` and ``lz_complexity`` over planes and output logits."""
    if not x.is_floating_point():
        raise SpecError("function_complexity needs real-valued inputs (not token ids)")
    if len(x) < 3:
        raise SpecError("function_complexity needs >= 3 inputs to span a plane")
    four, lz = [], []
    was_training = model.training
    model.eval()
    try:
        for _ in range(params.planes):
            idx = torch.randperm(len(x), generator=gen)[:3]
            with torch.inference_mode():
                out = model(plane_inputs(x, idx, params.grid)).double()
            out = out.reshape(params.grid, params.grid, -1).cpu().numpy()
            for k in range(out.shape[-1]):
                four.append(fourier_complexity(out[..., k]))
                lz.append(lz_complexity(out[..., k]))
    finally:
        model.train(was_training)
    return {"fourier_complexity": float(np.mean(four)), "lz_complexity": float(np.mean(lz))}


@PROBES.register(
    "function_complexity",
    ComplexityParams,
    papers=(85,),
    family="diag",
    tiny={"grid": 8, "planes": 1},
)
def function_complexity(
    model: nn.Module, ctx: EvalContext, params: ComplexityParams
) -> ProbeResult:
    """Complexity of the function the model computes on planes through training inputs
    (Teney et al., "Neural Redshift", #85). Metrics (split ``model``): ``fourier_complexity``,
    ``lz_complexity`` (``inputs="grid"``: also ``noise_fourier_complexity`` and
    ``noise_lz_complexity``, the same measures of an i.i.d. Gaussian map on the grid, the
    reference of a complex function). Params: ``grid``, ``planes``, ``split``, ``inputs``."""
    if params.split not in ctx.splits:
        raise SpecError(
            f"function_complexity.split: {params.split!r}; allowed: {', '.join(ctx.splits)}"
        )
    gen = torch.Generator().manual_seed(ctx.step + 85)
    x = ctx.splits[params.split].x
    if params.inputs == "planes":
        return {("model", k): v for k, v in model_complexity(model, x, params, gen).items()}
    n = math.isqrt(len(x))
    if n * n != len(x) or x.shape[1:] != (2,):
        raise SpecError(
            f"function_complexity.inputs='grid': split {params.split!r} must be a "
            f"square grid of 2-D points (task plane_grid), got {tuple(x.shape)}"
        )
    seed = getattr(ctx.spec, "seed", 0)  # one noise map per run
    noise_gen = torch.Generator().manual_seed(1_000_003 * seed + ctx.step + 85)
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            out = model(x).double()
    finally:
        model.train(was_training)
    maps = {
        "": out.reshape(len(x), -1)[:, 0].reshape(n, n).cpu().numpy(),
        "noise_": torch.randn(n, n, generator=noise_gen, dtype=torch.float64).numpy(),
    }
    return {
        ("model", f"{k}{m}_complexity"): float(f(v))
        for k, v in maps.items()
        for m, f in (("fourier", fourier_complexity), ("lz", lz_complexity))
    }
