"""Walks on a labelled concept graph, prompted by constraints: the combinatorial-creativity task.

After Schapiro et al., "Combinatorial Creativity: A New Frontier in Generalization Abilities"
(2025, catalogue #10): outputs are open-ended, so they are scored by utility (does the walk obey
the graph and the prompt?) and novelty (how different is it from what was trained?), not by a
fixed target. A random directed graph of ``n_nodes`` concepts, each with ``out_degree`` edges to
other concepts, every edge carrying one of ``n_labels`` relation labels. A prompt is
``(start, end, label)``; a valid output is a walk ``start, l1, n1, ..., lk, end`` of ``1..max_steps``
edges along the graph that uses ``label`` at least once.

Rows use the source -> target layout (``seq2seq_common``): the prompt, then the walk. Training and
``val/main`` rows are random walks with a prompt read off them; ``test/prompts`` rows are prompts
(with one valid walk as their target, unused by the creativity probe, which samples its own).
``info.extra`` holds the graph and the training walks for the probe (``probes/creativity.py``).
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from genlab.data import TaskData
from genlab.registry import Params
from genlab.tasks import TASKS
from genlab.tasks.seq2seq_common import FIRST, pack_pairs, seq2seq_info


class WalkParams(Params):
    """Params of ``concept_walks``."""

    n_nodes: int = Field(60, ge=4, le=1000)
    n_labels: int = Field(4, ge=1, le=32)
    out_degree: int = Field(3, ge=1)
    max_steps: int = Field(5, ge=1, le=16, description="longest walk, in edges")
    n_train: int = Field(20_000, ge=1)
    n_val: int = Field(500, ge=0)
    n_test: int = Field(300, ge=1, description="test prompts")


class Graph:
    """The concept graph and the token ids of nodes and labels."""

    def __init__(self, p: WalkParams, rng: np.random.Generator) -> None:
        self.p = p
        self.edges: dict[int, list[tuple[int, int]]] = {}
        for u in range(p.n_nodes):
            others = np.delete(np.arange(p.n_nodes), u)
            heads = rng.choice(others, size=min(p.out_degree, len(others)), replace=False)
            self.edges[u] = [(int(v), int(rng.integers(p.n_labels))) for v in heads]
        self.node0, self.label0 = FIRST, FIRST + p.n_nodes

    def walk(self, rng: np.random.Generator) -> tuple[list[int], list[int]]:
        """A random walk: (nodes, labels), ``len(nodes) == len(labels) + 1``."""
        nodes = [int(rng.integers(self.p.n_nodes))]
        labels: list[int] = []
        for _ in range(int(rng.integers(1, self.p.max_steps + 1))):
            v, lab = self.edges[nodes[-1]][int(rng.integers(len(self.edges[nodes[-1]])))]
            nodes.append(v)
            labels.append(lab)
        return nodes, labels

    def tokens(self, nodes: list[int], labels: list[int]) -> list[int]:
        out = [self.node0 + nodes[0]]
        for lab, v in zip(labels, nodes[1:], strict=True):
            out += [self.label0 + lab, self.node0 + v]
        return out

    def prompt(self, nodes: list[int], labels: list[int], rng: np.random.Generator) -> list[int]:
        lab = labels[int(rng.integers(len(labels)))]
        return [self.node0 + nodes[0], self.node0 + nodes[-1], self.label0 + lab]


@TASKS.register(
    "concept_walks",
    WalkParams,
    papers=(10,),
    family="compositional",
    tiny={"n_nodes": 20, "n_train": 500, "n_val": 50, "n_test": 50},
)
def concept_walks(params: WalkParams, data_seed: int) -> TaskData:
    """Constrained walks on a labelled concept graph (Schapiro et al., #10)."""
    rng = np.random.default_rng(data_seed)
    graph = Graph(params, rng)
    tgt_len = 2 * params.max_steps + 2

    def rows(n: int, meta: dict):  # noqa: ANN202
        walks = [graph.walk(rng) for _ in range(n)]
        src = [graph.prompt(nodes, labels, rng) for nodes, labels in walks]
        tgt = [graph.tokens(nodes, labels) for nodes, labels in walks]
        return pack_pairs(src, tgt, 3, tgt_len, meta), tgt

    train, walks = rows(params.n_train, {})
    val = {"main": rows(params.n_val, {})[0]} if params.n_val else {}
    test = {"prompts": rows(params.n_test, {"shift": "open-ended"})[0]}
    info = seq2seq_info(
        graph.label0 + params.n_labels,
        3,
        tgt_len,
        chance=0.0,
        edges={u: graph.edges[u] for u in range(params.n_nodes)},
        node0=graph.node0,
        label0=graph.label0,
        n_nodes=params.n_nodes,
        train_walks=sorted({tuple(w) for w in walks}),
    )
    return TaskData({"main": train}, val, test, info)
