"""The graph network of ``graph_net`` on PyTorch Geometric (imported only when it is built, so that
genlab imports without the ``graphs`` extra): Battaglia et al.'s GN block without a global
attribute, in the encode-process-decode arrangement of their shortest-path demo (#109).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch_geometric.nn import MessagePassing


def latent_mlp(d_in: int, width: int) -> nn.Sequential:
    """Two linear layers with a ReLU between them and a LayerNorm on the output: the demo's
    ``snt.nets.MLP([16, 16]) + LayerNorm`` latent modules."""
    return nn.Sequential(
        nn.Linear(d_in, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.LayerNorm(width)
    )


class GNBlock(MessagePassing):
    """One GN block, no global: ``e' = φe([e, v_src, v_dst])``, ``ē_i = ρ_{edges into i} e'``,
    ``v' = φv([v, ē])`` (Battaglia et al., #109, Algorithm 1 without ``u``); ``ρ`` is ``aggr``
    (the paper allows any permutation-invariant one: sum, mean, max)."""

    def __init__(self, d_node: int, d_edge: int, width: int, aggr: str = "add") -> None:
        super().__init__(aggr=aggr)
        self.edge_fn = latent_mlp(d_edge + 2 * d_node, width)
        self.node_fn = latent_mlp(d_node + width, width)

    def forward(self, v: Tensor, e: Tensor, edge_index: Tensor) -> tuple[Tensor, Tensor]:
        src, dst = edge_index
        e_new = self.edge_fn(torch.cat([e, v[src], v[dst]], dim=1))
        agg = self.propagate(edge_index, e=e_new, size=(len(v), len(v)))
        return self.node_fn(torch.cat([v, agg], dim=1)), e_new

    def message(self, e: Tensor) -> Tensor:  # the updated edge is the message
        return e


class EncodeProcessDecode(nn.Module):
    """Dense padded graphs ``[weights (n) | node features (f)]`` in, ``k`` logits per node out.

    Edges are the nonzero weights (both directions, as the demo's graphs); an edge's input is its
    weight, a node's its features. Encoders embed them; the core GN block runs ``steps`` times on
    ``[encoded, current]`` (shared weights); the decoder reads every node after the last step.
    Only real nodes are computed: a row whose node features are all zero is padding (it has no
    edges either) and gets zero logits (its target is ignored)."""

    def __init__(self, n: int, f: int, width: int, steps: int, k: int, aggr: str = "add") -> None:
        super().__init__()
        self.n, self.steps = n, steps
        self.enc_node = latent_mlp(f, width)
        self.enc_edge = latent_mlp(1, width)
        self.core = GNBlock(2 * width, 2 * width, width, aggr)
        self.dec = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, k))

    def forward(self, x: Tensor) -> Tensor:
        b, n = x.shape[0], self.n
        weights, feats = x[..., :n], x[..., n:]
        real = feats.reshape(b * n, -1).abs().sum(1) > 0  # padding rows are all zero
        index = torch.full((b * n,), -1, dtype=torch.long, device=x.device)
        index[real] = torch.arange(int(real.sum()), device=x.device)
        g, dst, src = weights.nonzero(as_tuple=True)  # row i lists the edges of node i
        edge_index = torch.stack([index[g * n + src], index[g * n + dst]])
        v0 = self.enc_node(feats.reshape(b * n, -1)[real])
        e0 = self.enc_edge(weights[g, dst, src].unsqueeze(1))
        v, e = v0, e0
        for _ in range(self.steps):
            v, e = self.core(torch.cat([v0, v], dim=1), torch.cat([e0, e], dim=1), edge_index)
        out = x.new_zeros(b * n, self.dec[-1].out_features)
        out[real] = self.dec(v)
        return out.reshape(b, n, -1)
