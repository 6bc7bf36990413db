"""PyTorch Geometric layers and the node-level graph network (imported only when a graph model is
built, so that genlab imports without the ``graphs`` extra).

``SIRConv`` is SIR-GCN's layer (Lim et al., #35): ``h_u* = W_R Σ_{v ∈ N(u)} σ(W_Q h_u + W_K h_v)``,
a message that depends on both ends of the edge (anisotropic, and dynamic: it changes with the
receiving node's features), summed, then one linear map (by linearity, once per node rather than
once per edge, as the official DGL ``SIRConv`` does).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch_geometric.nn import GCNConv, GINConv, MessagePassing


class SIRConv(MessagePassing):
    """``W_R Σ_{v ∈ N(u)} relu(W_Q h_u + W_K h_v)`` (SIR-GCN, #35) as a PyG message-passing layer."""

    def __init__(self, d_in: int, d_hidden: int, d_out: int) -> None:
        super().__init__(aggr="add")
        self.query = nn.Linear(d_in, d_hidden)
        self.key = nn.Linear(d_in, d_hidden)
        self.relation = nn.Linear(d_hidden, d_out)

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        return self.relation(self.propagate(edge_index, q=self.query(x), k=self.key(x)))

    def message(self, q_i: Tensor, k_j: Tensor) -> Tensor:  # i receives, j sends
        return torch.relu(q_i + k_j)


def mlp(width: int, layers: int) -> nn.Sequential:
    """``layers`` linear maps of ``width`` with ReLU between them (GIN's update)."""
    mods: list[nn.Module] = []
    for i in range(layers):
        mods += [nn.Linear(width, width)] + ([nn.ReLU()] if i < layers - 1 else [])
    return nn.Sequential(*mods)


class NodeGNN(nn.Module):
    """Dense graphs in, one real number per node out: ``[adjacency | features]`` rows are read
    into a PyG batch (a disjoint union of the graphs), embedded linearly, passed through
    ``layers`` convolutions of ``conv`` (ReLU between them, none after the last, as the paper's
    one-layer models) and read out linearly per node."""

    def __init__(
        self, conv: str, n_nodes: int, d_feat: int, width: int, layers: int, gin_mlp_layers: int
    ) -> None:
        super().__init__()
        self.n = n_nodes
        self.embed = nn.Linear(d_feat, width, bias=False)  # the paper's nn.Embedding of a class
        convs: list[nn.Module] = []
        for _ in range(layers):
            if conv == "gcn":
                convs.append(GCNConv(width, width))
            elif conv == "gin":
                convs.append(GINConv(mlp(width, gin_mlp_layers), train_eps=True))
            else:
                convs.append(SIRConv(width, width, width))
        self.convs = nn.ModuleList(convs)
        self.readout = nn.Linear(width, 1)

    def forward(self, x: Tensor) -> Tensor:
        b, n = x.shape[0], self.n
        adj, feats = x[..., :n], x[..., n:]
        g, dst, src = adj.nonzero(as_tuple=True)  # row i lists the neighbours of node i
        edge_index = torch.stack([g * n + src, g * n + dst])
        h = self.embed(feats.reshape(b * n, -1))
        for i, conv in enumerate(self.convs):
            h = conv(h, edge_index)
            if i < len(self.convs) - 1:
                h = torch.relu(h)
        return self.readout(h).reshape(b, n)
