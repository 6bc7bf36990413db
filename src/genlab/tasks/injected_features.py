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
  coin flip on val/test (a shortcut that curtails generalization);
- ``partial``: plus the number of filled 2x2 blocks lying wholly inside each quadrant, each count a
  program that reads its own quadrant: evidence of the label, but partial (a block across a
  quadrant border is missed: at ``size`` 6 and density 0.4 the counts find a block in 74% of the
  positive grids, and ``sum > 0`` alone is right on 90% of all grids, against 60% for the majority
  class);
- ``parity``: plus the parity of the filled cells of the top-left quadrant (times 4), a program of
  the grid that says next to nothing about 2x2 blocks (it agrees with the label on about half of
  the grids as they come).

``cue_agree`` (default ``None``: grids as they come) draws the *training* grids, whatever the
features, so that the top-left parity equals the label on that share of them: a confound of the
training sample that the ``parity`` program exposes and val/test grids do not have.

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

    features: Literal["none", "helpful", "irrelevant", "misleading", "partial", "parity"] = "none"
    size: int = Field(6, ge=3, le=32)
    density: float = Field(0.4, gt=0, lt=1)
    n_train: int = Field(200, ge=2)
    n_val: int = Field(500, ge=0)
    n_test: int = Field(4000, ge=1)
    spurious: float = Field(0.9, ge=0.5, le=1, description="misleading: agreement in training")
    cue_agree: float | None = Field(
        None,
        ge=0,
        le=1,
        description="training grids on which the top-left parity equals the label (None: as drawn)",
    )


def _blocks(g: np.ndarray) -> np.ndarray:
    """Where a filled 2x2 block starts: ``(N, size-1, size-1)``."""
    return g[:, :-1, :-1] & g[:, 1:, :-1] & g[:, :-1, 1:] & g[:, 1:, 1:]


def _quadrant_sums(a: np.ndarray) -> np.ndarray:
    h, w = a.shape[1] // 2, a.shape[2] // 2
    parts = [a[:, :h, :w], a[:, :h, w:], a[:, h:, :w], a[:, h:, w:]]
    return np.stack([q.sum((1, 2)) for q in parts], 1).astype(np.float32)


def _quadrants(g: np.ndarray) -> list[np.ndarray]:
    h, w = g.shape[1] // 2, g.shape[2] // 2
    return [g[:, :h, :w], g[:, :h, w:], g[:, h:, :w], g[:, h:, w:]]


def _parity(g: np.ndarray) -> np.ndarray:
    """The parity of the filled cells of the top-left quadrant: ``(N,)`` of 0/1."""
    return _quadrants(g)[0].sum((1, 2)) % 2


def _confounded(p: InjectedParams, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` grids of which ``round(cue_agree * n)`` have the top-left parity equal to the label,
    drawn from fresh grids in order and shuffled."""
    want = round(p.cue_agree * n)
    agree, other = [], []
    while sum(map(len, agree)) < want or sum(map(len, other)) < n - want:
        g = rng.random((4 * n, p.size, p.size)) < p.density
        hit = _parity(g) == _blocks(g).any((1, 2))
        agree.append(g[hit]), other.append(g[~hit])
    g = np.concatenate([np.concatenate(agree)[:want], np.concatenate(other)[: n - want]])
    return g[rng.permutation(n)]


def make(p: InjectedParams, n: int, rng: np.random.Generator, training: bool) -> Split:
    if training and p.cue_agree is not None:
        g = _confounded(p, n, rng)
    else:
        g = rng.random((n, p.size, p.size)) < p.density
    y = _blocks(g).any((1, 2)).astype(np.int64)
    parts = [g.reshape(n, -1).astype(np.float32)]
    if p.features == "helpful":
        parts.append(_quadrant_sums(_blocks(g)))
    elif p.features == "irrelevant":
        parts.append(_quadrant_sums(g) / 4)
    elif p.features == "partial":
        parts.append(
            np.stack([_blocks(q).sum((1, 2)) for q in _quadrants(g)], 1).astype(np.float32)
        )
    elif p.features == "parity":
        parts.append(_parity(g)[:, None].astype(np.float32) * 4)
    elif p.features == "misleading":
        agree = rng.random(n) < (p.spurious if training else 0.5)
        parts.append(np.where(agree, y, 1 - y)[:, None].astype(np.float32) * 4)
    return Split(torch.tensor(np.concatenate(parts, 1)), torch.tensor(y), {})


@TASKS.register(
    "injected_features",
    InjectedParams,
    papers=(119,),
    family="compositional",
    tiny={"n_val": 100, "n_test": 500},
)
def injected_features(params: InjectedParams, data_seed: int) -> TaskData:
    """Grids labelled by a local pattern, with injected program features (G-SSNN, #119)."""
    rng = np.random.default_rng(data_seed)
    train = {"main": make(params, params.n_train, rng, True)}
    val = {"main": make(params, params.n_val, rng, False)} if params.n_val else {}
    test = {"main": make(params, params.n_test, rng, False)}
    width = train["main"].x.shape[1]
    info = TaskInfo(
        kind="classification",
        n_outputs=2,
        input_shape=(width,),
        chance=0.5,
        extra={"features": params.features},
    )
    return TaskData(train, val, test, info)
