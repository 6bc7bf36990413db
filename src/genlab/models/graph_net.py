"""A graph network (Battaglia et al., "Relational inductive biases, deep learning, and graph
networks", #109) and a non-relational MLP reading the same dense weighted graphs.

``graph_net`` is the paper's encode-process-decode model of its shortest-path demo, on PyTorch
Geometric: an encoder MLP per node and per edge; a core GN block applied ``steps`` times with
shared weights, each time on its input concatenated with the encoded graph (the demo's skip); a
decoder MLP per node giving two logits (off / on the path). The GN block updates each edge from
itself and its two end nodes, ``e' = φe([e, v_src, v_dst])``, sums the updated edges arriving at
each node (PyG ``MessagePassing``, ``aggr`` "add", the paper's ρ e→v) and updates the node,
``v' = φv([v, Σ e'])``. Differences from the paper's full GN block: no global attribute (the
demo has one: a graph-level vector that could count nodes, which the paper's own
size-generalization argument does not need), and the loss reads the last processing step only
(the demo averages it over every step).

``graph_mlp`` is the non-relational model of the same inputs: the whole padded graph (every
node's row of edge weights and flags) flattened into one vector, an MLP, and two logits per node
slot. It has no notion of an edge or of a node shared across slots. Both read tasks whose
``info.extra`` declares ``layout = "weighted_graph"`` (``graph_shortest_path``) and refuse any other.
PyTorch Geometric is the ``graphs`` extra, imported when ``graph_net`` is built.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.errors import SpecError
from genlab.models import MODELS
from genlab.registry import Params


def check_graph_task(name: str, info: TaskInfo) -> tuple[int, int]:
    """``(nodes, node features)`` of a dense weighted-graph task; ``ValueError`` otherwise."""
    if info.kind != "sequence" or info.extra.get("layout") != "weighted_graph":
        raise ValueError(
            f"{name} reads dense weighted graphs with a label per node (a task like "
            "graph_shortest_path)"
        )
    return int(info.extra["graph_nodes"]), int(info.extra["node_features"])


class GraphNetParams(Params):
    """Params of ``graph_net``."""

    width: int = Field(32, ge=1, le=512, description="latent size of nodes and edges (demo: 16)")
    steps: int = Field(10, ge=1, le=64, description="core applications (the demo: 10)")
    aggr: Literal["add", "mean", "max"] = Field(
        "add", description="edge-to-node aggregation (the demo: add)"
    )


class GraphMLPParams(Params):
    """Params of ``graph_mlp``."""

    width: int = Field(256, ge=1, le=4096, description="hidden units")
    depth: int = Field(2, ge=1, le=8, description="hidden layers")


@MODELS.register(
    "graph_net", GraphNetParams, papers=(109,), family="graphs", tiny={"width": 8, "steps": 2}
)
def graph_net(params: GraphNetParams, info: TaskInfo) -> nn.Module:
    """Encode-process-decode graph network with a shared edge/node GN core (Battaglia et al.,
    #109), message passing on PyG."""
    n, f = check_graph_task("graph_net", info)
    try:
        from genlab.models._pyg_gn import EncodeProcessDecode
    except ImportError as exc:
        raise SpecError(
            f"model 'graph_net' needs PyTorch Geometric: pip install 'genlab[graphs]' ({exc})"
        ) from None
    return EncodeProcessDecode(n, f, params.width, params.steps, info.n_outputs, params.aggr)


class GraphMLP(nn.Module):
    """Flattened padded graph -> MLP -> ``n_outputs`` logits per node slot."""

    def __init__(self, n: int, f: int, p: GraphMLPParams, n_outputs: int) -> None:
        super().__init__()
        self.n, self.k = n, n_outputs
        d_in = math.prod((n, n + f))
        layers: list[nn.Module] = []
        for _ in range(p.depth):
            layers += [nn.Linear(d_in, p.width), nn.ReLU()]
            d_in = p.width
        layers.append(nn.Linear(d_in, n * n_outputs))
        self.net = nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x.flatten(1)).reshape(len(x), self.n, self.k)


@MODELS.register(
    "graph_mlp", GraphMLPParams, papers=(109,), family="graphs", tiny={"width": 8, "depth": 1}
)
def graph_mlp(params: GraphMLPParams, info: TaskInfo) -> nn.Module:
    """Non-relational baseline of #109's shortest-path demo: an MLP on the flattened padded
    graph, two logits per node slot."""
    n, f = check_graph_task("graph_mlp", info)
    return GraphMLP(n, f, params, info.n_outputs)
