"""``relation_graphs``: synthetic scene graphs for predicate classification, with dense graphs of
frequent compositions and sparse graphs of rare ones (Knyazev et al., "Graph density-aware losses
for novel compositions in scene graph generation", BMVC 2020, #94).

Every example is one graph of objects, each of one of ``classes`` classes, padded to
``pad_to`` objects; every ordered pair of distinct objects is an edge to classify: background
(``0``) or one of ``predicates`` predicates (``1..R``), as in the PredCls setting (object classes
given). An edge's input row is ``[subject class one-hot | object class one-hot | pair feature
(dim) | 1]``: the pair feature is the predicate's prototype plus Gaussian noise (``noise``) for a
foreground edge, and noise alone for a background one (the "visual" evidence). Padding rows are
all zero with target ``-100``.

Two kinds of graph, ``typical_share`` of them typical:

- typical: ``small_nodes`` objects and ``fg_edges`` foreground edges (dense); each edge's
  predicate is its class pair's usual predicate (one per pair, drawn once per ``data_seed``) with
  probability ``bias``, otherwise uniform: the frequency bias a "blind" model can exploit;
- diverse: ``large_nodes`` objects and the same ``fg_edges`` foreground edges (sparse); every
  predicate uniform: the many rare compositions.

``zero_share`` of the (subject, predicate, object) triplets that are not a pair's usual one are
held out of training (redrawn if drawn) and appear only in ``val``/``test``: the zero-shot
compositions. ``swap=True`` gives the typical graphs the large size and the diverse ones the small
size (the rare compositions then live in the dense graphs). Splits: ``train/main``, ``val/main``
and ``test/main`` of the same mixture (the test splits with zero-shot triplets allowed). The
probe ``triplet_recall`` reads recall@K on all, zero-shot and few-shot triplets.
"""

from __future__ import annotations

import numpy as np
import torch
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.losses import IGNORE
from genlab.registry import Params
from genlab.tasks import TASKS


class RelationParams(Params):
    """Params of ``relation_graphs``."""

    classes: int = Field(8, ge=2, le=64, description="object classes")
    predicates: int = Field(5, ge=2, le=32, description="predicates (besides background)")
    dim: int = Field(8, ge=1, le=128, description="pair feature size")
    noise: float = Field(1.0, ge=0, description="std of the pair feature's noise")
    small_nodes: int = Field(5, ge=2, le=64, description="objects of a small (dense) graph")
    large_nodes: int = Field(14, ge=2, le=64, description="objects of a large (sparse) graph")
    fg_edges: int = Field(8, ge=1, description="foreground edges of every graph")
    typical_share: float = Field(0.5, ge=0, le=1, description="share of typical graphs")
    bias: float = Field(
        0.9, ge=0, le=1, description="chance a typical edge takes its pair's usual predicate"
    )
    zero_share: float = Field(
        0.2, ge=0, lt=1, description="share of unusual triplets held out of training"
    )
    swap: bool = Field(False, description="typical graphs large, diverse graphs small")
    pad_to: int | None = Field(
        None, ge=2, le=64, description="objects per example (None: the larger graph size)"
    )
    n_train: int = Field(2000, ge=1, le=100_000)
    n_val: int = Field(300, ge=1, le=100_000)
    n_test: int = Field(300, ge=1, le=100_000)

    @model_validator(mode="after")
    def _sizes(self) -> RelationParams:
        for name in ("small_nodes", "large_nodes"):
            n = getattr(self, name)
            if self.fg_edges > n * (n - 1):
                raise ValueError(
                    f"fg_edges ({self.fg_edges}) must fit in the {n * (n - 1)} "
                    f"ordered pairs of {name} ({n})"
                )
        if self.pad_to is not None and self.pad_to < max(self.small_nodes, self.large_nodes):
            raise ValueError(f"pad_to ({self.pad_to}) must hold the largest graph")
        return self

    @property
    def width(self) -> int:
        return self.pad_to or max(self.small_nodes, self.large_nodes)


def world(p: RelationParams, rng: np.random.Generator):
    """Predicate prototypes ``(R, dim)``, each class pair's usual predicate ``(C, C)`` (1..R) and
    the held-out zero-shot triplets ``(C, R + 1, C)`` (bool)."""
    protos = rng.standard_normal((p.predicates, p.dim))
    protos *= 2.0 / np.linalg.norm(protos, axis=1, keepdims=True)
    usual = rng.integers(1, p.predicates + 1, size=(p.classes, p.classes))
    held = rng.random((p.classes, p.predicates + 1, p.classes)) < p.zero_share
    held[:, 0, :] = False
    s, o = np.meshgrid(np.arange(p.classes), np.arange(p.classes), indexing="ij")
    held[s, usual, o] = False
    return protos, usual, held


def graphs(p: RelationParams, count: int, w: tuple, rng: np.random.Generator, train: bool):
    """``count`` graphs: inputs ``(count, pad², 2C + dim + 1)``, targets ``(count, pad²)``."""
    protos, usual, held = w
    c, r, width = p.classes, p.predicates, p.width
    x = np.zeros((count, width * width, 2 * c + p.dim + 1), dtype=np.float32)
    y = np.full((count, width * width), IGNORE, dtype=np.int64)
    typical_n, diverse_n = (
        (p.large_nodes, p.small_nodes) if p.swap else (p.small_nodes, p.large_nodes)
    )
    for g in range(count):
        typical = rng.random() < p.typical_share
        n = typical_n if typical else diverse_n
        cls = rng.integers(0, c, size=n)
        i, j = np.nonzero(~np.eye(n, dtype=bool))  # every ordered pair of distinct objects
        pred = np.zeros(len(i), dtype=np.int64)
        for k in rng.choice(len(i), size=p.fg_edges, replace=False):
            while True:
                if typical and rng.random() < p.bias:
                    pred[k] = usual[cls[i[k]], cls[j[k]]]
                else:
                    pred[k] = rng.integers(1, r + 1)
                if not (train and held[cls[i[k]], pred[k], cls[j[k]]]):
                    break
        rows = i * width + j
        x[g, rows, cls[i]] = 1.0
        x[g, rows, c + cls[j]] = 1.0
        feat = p.noise * rng.standard_normal((len(i), p.dim))
        feat[pred > 0] += protos[pred[pred > 0] - 1]
        x[g, rows, 2 * c : 2 * c + p.dim] = feat
        x[g, rows, -1] = 1.0
        y[g, rows] = pred
    return torch.from_numpy(x), torch.from_numpy(y)


@TASKS.register(
    "relation_graphs",
    RelationParams,
    papers=(94,),
    family="graphs",
    tiny={
        "classes": 3,
        "predicates": 2,
        "dim": 2,
        "small_nodes": 3,
        "large_nodes": 5,
        "fg_edges": 3,
        "n_train": 40,
        "n_val": 10,
        "n_test": 10,
    },
)
def relation_graphs(params: RelationParams, data_seed: int) -> TaskData:
    """Synthetic scene graphs: dense graphs of frequent compositions, sparse graphs of rare ones
    (Knyazev et al., #94)."""
    w = world(params, np.random.default_rng([data_seed, 0]))
    x_tr, y_tr = graphs(params, params.n_train, w, np.random.default_rng([data_seed, 1]), True)
    x_va, y_va = graphs(params, params.n_val, w, np.random.default_rng([data_seed, 2]), False)
    x_te, y_te = graphs(params, params.n_test, w, np.random.default_rng([data_seed, 3]), False)
    info = TaskInfo(
        kind="sequence",
        n_outputs=params.predicates + 1,
        input_shape=(params.width**2, 2 * params.classes + params.dim + 1),
        extra={"layout": "relation_pairs", "classes": params.classes},
    )
    return TaskData(
        {"main": Split(x_tr, y_tr)}, {"main": Split(x_va, y_va)}, {"main": Split(x_te, y_te)}, info
    )
