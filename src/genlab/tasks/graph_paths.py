"""``graph_shortest_path``: label the nodes on a shortest path between two marked nodes of a
random graph, trained on small graphs and tested on larger ones (the shortest-path demo of
Battaglia et al., "Relational inductive biases, deep learning, and graph networks", #109).

Each graph has ``n`` nodes (drawn uniformly in a range) scattered uniformly in a square of side
``sqrt(n)`` (one node per unit area at every size, so the local statistics — degree, edge lengths
— do not change with ``n``; only the graph and its paths grow). Edges join each node to its
``k_nearest`` nearest neighbours, plus a minimum spanning tree so that the graph is connected (the
demo joins a geographic threshold graph with a spanning tree likewise). A start and an end node
are drawn at random (distinct). ``metric``: ``hops`` (default) measures a path by its edge count
and labels every node on any shortest path strictly between the two ends (``d(s,v) + d(v,e) =
d(s,e)``: a set, unique although paths tie); ``length`` measures it by the edges' Euclidean
lengths, as the demo does (the path is then unique). The two ends are given in the input and not
scored (the demo labels them too; here they would be free points, most of the path's nodes on
small graphs).

Inputs are dense and padded to ``pad_to`` nodes, one row per node: ``[edge values to every node
(pad_to; 0: no edge, else 1 for hops or the length) | is_node | is_start | is_end]``. Targets are
``1`` on a shortest path, ``0`` off it, and ``-100`` (ignored) on the two ends and on padding
rows: ``TaskInfo.kind = "sequence"`` with two classes per node, so ``accuracy`` is the share of
graphs solved exactly (every node right). Splits: ``train/main`` and ``val/main`` (sizes
``train_min``-``train_max``), ``test/large`` (sizes ``test_min``-``test_max``). Everything is
drawn from ``data_seed``, each split from its own stream.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from pydantic import Field, model_validator
from scipy.sparse.csgraph import minimum_spanning_tree, shortest_path

from genlab.data import Split, TaskData, TaskInfo
from genlab.losses import IGNORE
from genlab.registry import Params
from genlab.tasks import TASKS

NODE_FEATURES = 3  # is_node, is_start, is_end
SPLITS = {"train": 0, "val": 1, "test": 2}  # stream index per split


class ShortestPathParams(Params):
    """Params of ``graph_shortest_path``."""

    train_min: int = Field(8, ge=3, le=256, description="fewest nodes of a training graph")
    train_max: int = Field(16, ge=3, le=256, description="most nodes of a training graph")
    test_min: int = Field(32, ge=3, le=256, description="fewest nodes of a test graph")
    test_max: int = Field(64, ge=3, le=256, description="most nodes of a test graph")
    pad_to: int | None = Field(
        None, ge=3, le=256, description="rows per graph (None: the largest size of any split)"
    )
    k_nearest: int = Field(3, ge=1, le=16, description="edges to each node's nearest neighbours")
    metric: Literal["hops", "length"] = Field(
        "hops",
        description="hops: shortest by edge count, every node on any shortest path "
        "labelled, edges given as 1; length: by Euclidean edge length (the demo's), edges given "
        "by their length",
    )
    n_train: int = Field(2000, ge=1, le=100_000, description="training graphs")
    n_val: int = Field(300, ge=1, le=100_000, description="validation graphs (training sizes)")
    n_test: int = Field(300, ge=1, le=100_000, description="test graphs (test sizes)")

    @model_validator(mode="after")
    def _ranges(self) -> ShortestPathParams:
        if self.train_min > self.train_max:
            raise ValueError(
                f"train_min ({self.train_min}) must not exceed train_max ({self.train_max})"
            )
        if self.test_min > self.test_max:
            raise ValueError(
                f"test_min ({self.test_min}) must not exceed test_max ({self.test_max})"
            )
        if self.k_nearest >= self.train_min:
            raise ValueError(
                f"k_nearest ({self.k_nearest}) must be below train_min ({self.train_min})"
            )
        if self.pad_to is not None and self.pad_to < max(self.train_max, self.test_max):
            raise ValueError(
                f"pad_to ({self.pad_to}) must hold the largest graph "
                f"({max(self.train_max, self.test_max)} nodes)"
            )
        return self

    @property
    def width(self) -> int:
        return self.pad_to or max(self.train_max, self.test_max)


def one_graph(
    n: int, k: int, metric: str, rng: np.random.Generator
) -> tuple[np.ndarray, int, int, np.ndarray]:
    """Edge values ``(n, n)`` (symmetric, 0: no edge; 1 or the edge's length), start, end and the
    0/1 label per node: 1 on a shortest path strictly between start and end."""
    pos = rng.uniform(0.0, np.sqrt(n), size=(n, 2))
    dist = np.sqrt(((pos[:, None] - pos[None]) ** 2).sum(-1))
    near = np.argsort(dist, axis=1)[:, 1 : k + 1]
    adj = np.zeros((n, n), dtype=bool)
    adj[np.repeat(np.arange(n), k), near.ravel()] = True
    adj |= minimum_spanning_tree(dist).toarray() > 0
    adj |= adj.T
    weights = np.where(adj, dist if metric == "length" else 1.0, 0.0)
    start, end = rng.choice(n, size=2, replace=False)
    d = shortest_path(weights, method="D", directed=False, indices=[start, end])
    on_path = np.isclose(d[0] + d[1], d[0, end], rtol=0, atol=1e-9).astype(np.int64)
    on_path[[start, end]] = 0
    return weights, int(start), int(end), on_path


def graphs(p: ShortestPathParams, count: int, lo: int, hi: int, rng: np.random.Generator):
    """``count`` graphs of ``lo``-``hi`` nodes: inputs ``(count, width, width + 3)`` and targets
    ``(count, width)`` (``IGNORE`` on padding rows)."""
    w = p.width
    x = np.zeros((count, w, w + NODE_FEATURES), dtype=np.float32)
    y = np.full((count, w), IGNORE, dtype=np.int64)
    for g in range(count):
        n = int(rng.integers(lo, hi + 1))
        weights, start, end, on_path = one_graph(n, p.k_nearest, p.metric, rng)
        x[g, :n, :n] = weights
        x[g, :n, w] = 1.0
        x[g, start, w + 1] = 1.0
        x[g, end, w + 2] = 1.0
        y[g, :n] = on_path
        y[g, [start, end]] = IGNORE  # given in the input: not scored
    return torch.from_numpy(x), torch.from_numpy(y)


@TASKS.register(
    "graph_shortest_path",
    ShortestPathParams,
    papers=(109,),
    family="graphs",
    tiny={
        "train_min": 4,
        "train_max": 6,
        "test_min": 7,
        "test_max": 9,
        "n_train": 40,
        "n_val": 10,
        "n_test": 10,
    },
)
def graph_shortest_path(params: ShortestPathParams, data_seed: int) -> TaskData:
    """Nodes on a shortest path of random graphs; small graphs to train, larger to test
    (Battaglia et al.'s shortest-path demo, #109)."""

    def rng(split: str) -> np.random.Generator:
        return np.random.default_rng([data_seed, SPLITS[split]])

    train = graphs(params, params.n_train, params.train_min, params.train_max, rng("train"))
    val = graphs(params, params.n_val, params.train_min, params.train_max, rng("val"))
    test = graphs(params, params.n_test, params.test_min, params.test_max, rng("test"))
    small = {"nodes": f"{params.train_min}-{params.train_max}"}
    info = TaskInfo(
        kind="sequence",
        n_outputs=2,
        input_shape=(params.width, params.width + NODE_FEATURES),
        chance=0.0,
        extra={
            "graph_nodes": params.width,
            "node_features": NODE_FEATURES,
            "layout": "weighted_graph",
        },
    )
    return TaskData(
        {"main": Split(*train, small)},
        {"main": Split(*val, small)},
        {"large": Split(*test, {"nodes": f"{params.test_min}-{params.test_max}"})},
        info,
    )
