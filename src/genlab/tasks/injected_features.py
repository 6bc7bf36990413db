"""Binary grids with program-derived discrete features injected next to the raw pixels.

After Merlin, "Graph-based Symbolically Synthesized Neural Networks" (G-SSNN, 2023-24, catalogue
#119): a neural module reads a representation augmented with a fixed set of local, discrete
features computed by symbolic programs, and the choice of features modulates data efficiency and
generalization, up or down. The task: random ``size x size`` binary grids (cell density
``density``), labelled 1 when the grid holds a filled 2x2 block. ``features``:

- ``none``: the raw grid only;
- ``helpful``: plus the number of filled 2x2 blocks in each quadrant (a program that computes the
  label's evidence locally);
- ``irrelevant``: plus the number of filled cells in each quadrant (a local count that says little);
- ``misleading``: plus a bit that equals the label on ``spurious`` of the training grids and is a
  coin flip on val/test (a shortcut that curtails generalization).

Inputs are flat float vectors ``[grid, features]``; ``test/main`` is a large sample of grids.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from pydantic import Field

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.tasks import TASKS


class InjectedParams(Params):
    """Params of ``injected_features``."""

    features: Literal["none", "helpful", "irrelevant", "misleading"] = "none"
    size: int = Field(6, ge=3, le=32)
    density: float = Field(0.4, gt=0, lt=1)
    n_train: int = Field(200, ge=2)
    n_val: int = Field(500, ge=0)
    n_test: int = Field(4000, ge=1)
    spurious: float = Field(0.9, ge=0.5, le=1, description="misleading: agreement in training")


def _blocks(g: np.ndarray) -> np.ndarray:
    """Where a filled 2x2 block starts: ``(N, size-1, size-1)``."""
    return g[:, :-1, :-1] & g[:, 1:, :-1] & g[:, :-1, 1:] & g[:, 1:, 1:]


def _quadrant_sums(a: np.ndarray) -> np.ndarray:
    h, w = a.shape[1] // 2, a.shape[2] // 2
    parts = [a[:, :h, :w], a[:, :h, w:], a[:, h:, :w], a[:, h:, w:]]
    return np.stack([q.sum((1, 2)) for q in parts], 1).astype(np.float32)


def make(p: InjectedParams, n: int, rng: np.random.Generator, training: bool) -> Split:
    g = rng.random((n, p.size, p.size)) < p.density
    y = _blocks(g).any((1, 2)).astype(np.int64)
    parts = [g.reshape(n, -1).astype(np.float32)]
    if p.features == "helpful":
        parts.append(_quadrant_sums(_blocks(g)))
    elif p.features == "irrelevant":
        parts.append(_quadrant_sums(g) / 4)
    elif p.features == "misleading":
        agree = rng.random(n) < (p.spurious if training else 0.5)
        parts.append(np.where(agree, y, 1 - y)[:, None].astype(np.float32) * 4)
    return Split(torch.tensor(np.concatenate(parts, 1)), torch.tensor(y), {})


@TASKS.register(
    "injected_features", InjectedParams, papers=(119,), family="compositional",
    tiny={"n_val": 100, "n_test": 500},
)  # fmt: skip
def injected_features(params: InjectedParams, data_seed: int) -> TaskData:
    """Grids labelled by a local pattern, with injected program features (G-SSNN, #119)."""
    rng = np.random.default_rng(data_seed)
    train = {"main": make(params, params.n_train, rng, True)}
    val = {"main": make(params, params.n_val, rng, False)} if params.n_val else {}
    test = {"main": make(params, params.n_test, rng, False)}
    width = train["main"].x.shape[1]
    info = TaskInfo(kind="classification", n_outputs=2, input_shape=(width,), chance=0.5,
                    extra={"features": params.features})  # fmt: skip
    return TaskData(train, val, test, info)
