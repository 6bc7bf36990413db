"""``graph_node_targets``: random graphs whose node-level targets need, or do not need, messages
that depend on both ends of an edge (SIR-GCN, Lim et al., #35).

Each example is one Erdős–Rényi graph of ``n_nodes`` nodes (edge probability drawn per graph from
``[p_min, p_max]``), each node of one of ``classes`` classes drawn uniformly: the node-level form
of the paper's GraphHeterophily data (the official code draws DGL random graphs with uniform
labels and counts, per graph, the edges whose ends differ). Targets, one real number per node:

- ``heterophily``: how many of the node's neighbours are of another class than its own: an
  anisotropic target (each edge's term depends on both ends), what SIR-GCN's message
  ``σ(W_Q h_u + W_K h_v)`` computes and an isotropic sum of neighbour features does not;
- ``class_sum``: the sum of the neighbours' class indices: a sum of a function of the neighbour
  alone, which sum aggregation (GIN) represents exactly (the negative control's target).

Inputs are dense, one row per node: ``[adjacency row (n_nodes) | one-hot class (classes)]``; the
graph models (``gcn``, ``gin``, ``sir_gcn``) read the edges from the adjacency block. Targets are
real: ``TaskInfo.kind = "regression"`` with one output per node. Splits: ``train/main`` and
``test/iid`` (fresh graphs from the same distribution). Everything is drawn from ``data_seed``.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.tasks import TASKS


class GraphNodeParams(Params):
    """Params of ``graph_node_targets``."""

    target: Literal["heterophily", "class_sum"] = Field(
        "heterophily",
        description="heterophily: neighbours of another class (anisotropic); "
        "class_sum: sum of the neighbours' class indices (a sum suffices)",
    )
    n_nodes: int = Field(12, ge=2, le=64, description="nodes per graph")
    classes: int = Field(4, ge=2, le=32, description="node classes (one-hot features)")
    p_min: float = Field(0.2, gt=0, le=1, description="least edge probability of a graph")
    p_max: float = Field(0.5, gt=0, le=1, description="largest edge probability of a graph")
    n_train: int = Field(1000, ge=1, le=100_000, description="training graphs")
    n_test: int = Field(500, ge=1, le=100_000, description="test graphs")

    @model_validator(mode="after")
    def _range(self) -> GraphNodeParams:
        if self.p_min > self.p_max:
            raise ValueError(f"p_min ({self.p_min}) must not exceed p_max ({self.p_max})")
        return self


def graphs(p: GraphNodeParams, n: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` graphs: inputs ``(n, n_nodes, n_nodes + classes)`` and targets ``(n, n_nodes)``."""
    k = p.n_nodes
    prob = p.p_min + (p.p_max - p.p_min) * torch.rand(n, 1, 1, generator=gen)
    upper = (torch.rand(n, k, k, generator=gen) < prob).triu(1).float()
    adj = upper + upper.transpose(1, 2)
    cls = torch.randint(0, p.classes, (n, k), generator=gen)
    onehot = torch.nn.functional.one_hot(cls, p.classes).float()
    if p.target == "heterophily":
        same = (adj @ onehot).gather(2, cls.unsqueeze(2)).squeeze(2)
        y = adj.sum(2) - same
    else:
        y = adj @ cls.float().unsqueeze(2)
        y = y.squeeze(2)
    return torch.cat([adj, onehot], dim=2), y


@TASKS.register(
    "graph_node_targets",
    GraphNodeParams,
    papers=(35,),
    family="graphs",
    tiny={"n_nodes": 6, "n_train": 40, "n_test": 20},
)
def graph_node_targets(params: GraphNodeParams, data_seed: int) -> TaskData:
    """Random graphs with a heterophily (anisotropic) or class-sum node target (Lim et al., #35)."""
    gen = torch.Generator().manual_seed(data_seed)
    x_tr, y_tr = graphs(params, params.n_train, gen)
    x_te, y_te = graphs(params, params.n_test, gen)
    meta = {"target": params.target}
    info = TaskInfo(
        kind="regression",
        n_outputs=params.n_nodes,
        input_shape=(params.n_nodes, params.n_nodes + params.classes),
        extra={"graph_nodes": params.n_nodes, "node_features": params.classes},
    )
    return TaskData({"main": Split(x_tr, y_tr, meta)}, {}, {"iid": Split(x_te, y_te, meta)}, info)
