"""Graph federated learning, the substrate for ``fed.fedlog`` (Kim et al. 2024, #78): per-client
stochastic-block-model graphs with label-distribution skew, nodes that arrive later with an unseen
label distribution, and a 2-layer GCN in plain torch (Kipf & Welling 2017).

The catalogue's CPU design for #78: 5 clients, each an SBM graph whose class shares are drawn from
Dirichlet(alpha) (small alpha -> a few classes per client); node features are a class mean shared by
every client plus Gaussian noise, so a client can learn an absent class only from the others. After
training, ``new_nodes`` nodes with uniformly drawn labels join each client's graph (same SBM rule):
the accuracy of the client's model on them is the "unseen label distribution" metric of FedLoG.
Training sees the graph of the seen nodes only; evaluation runs on the grown graph.

FedLoG's synthetic nodes and the Flower apps are in ``graph_apps``, the RunSpec kind in
``graph_spec``, the rounds into the store in ``graph_runner``. No Flower here: torch only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn


@dataclass
class ClientGraph:
    """One client's graph: the seen nodes first, then the nodes that arrive after training."""

    x: Tensor  # (n, dim) node features
    y: Tensor  # (n,) labels
    adj_seen: Tensor  # (n_seen, n_seen) normalised adjacency of the seen nodes (training)
    adj: Tensor  # (n, n) normalised adjacency of the grown graph (evaluation)
    train: Tensor  # (n,) bool: seen nodes with a training label
    test: Tensor  # (n,) bool: seen nodes held out (the client's own label distribution)
    unseen: Tensor  # (n,) bool: new nodes, labels uniform over the classes

    @property
    def n_seen(self) -> int:
        return int((self.train | self.test).sum())


def normalise(a: Tensor) -> Tensor:
    """``D^-1/2 (A + I) D^-1/2``, the GCN propagation matrix (dense)."""
    a = a + torch.eye(len(a), dtype=a.dtype)
    d = a.sum(1).rsqrt()
    return d[:, None] * a * d[None, :]


def sbm_clients(
    clients: int = 5,
    classes: int = 5,
    nodes: int = 200,
    new_nodes: int = 100,
    alpha: float = 0.1,
    dim: int = 16,
    signal: float = 1.0,
    p_in: float = 0.05,
    p_out: float = 0.005,
    test_share: float = 0.2,
    seed: int = 0,
) -> list[ClientGraph]:
    """``clients`` SBM graphs with Dirichlet(alpha) label skew (see the module docstring).
    ``signal`` scales the class means (unit-variance noise); ``p_in``/``p_out``: the edge
    probabilities within and across classes."""
    rng = np.random.default_rng(seed)
    means = rng.standard_normal((classes, dim)) * signal
    out = []
    for _ in range(clients):
        shares = np.nan_to_num(rng.dirichlet([alpha] * classes), nan=1.0 / classes)
        y = np.concatenate(
            [rng.choice(classes, nodes, p=shares), rng.integers(0, classes, new_nodes)]
        )
        n = len(y)
        x = means[y] + rng.standard_normal((n, dim))
        same = y[:, None] == y[None, :]
        upper = np.triu(rng.random((n, n)) < np.where(same, p_in, p_out), k=1)
        a = torch.from_numpy((upper | upper.T).astype(np.float32))
        seen = np.arange(n) < nodes
        held = np.zeros(n, dtype=bool)
        held[rng.choice(nodes, int(round(test_share * nodes)), replace=False)] = True
        out.append(
            ClientGraph(
                x=torch.from_numpy(x).float(),
                y=torch.from_numpy(y).long(),
                adj_seen=normalise(a[:nodes, :nodes]),
                adj=normalise(a),
                train=torch.from_numpy(seen & ~held),
                test=torch.from_numpy(held),
                unseen=torch.from_numpy(~seen),
            )
        )
    return out


class GCN(nn.Module):
    """Two graph convolutions, ``A relu(A X W1) W2`` (Kipf & Welling 2017); ``embed`` is the
    hidden representation (FedLoG's class prototypes are means of it)."""

    def __init__(self, dim: int, classes: int, hidden: int = 32) -> None:
        super().__init__()
        self.l1 = nn.Linear(dim, hidden)
        self.l2 = nn.Linear(hidden, classes)

    def embed(self, x: Tensor, adj: Tensor) -> Tensor:
        return torch.relu(adj @ self.l1(x))

    def forward(self, x: Tensor, adj: Tensor) -> Tensor:
        return adj @ self.l2(self.embed(x, adj))


def train_local(
    model: GCN, g: ClientGraph, steps: int = 100, lr: float = 0.01, weight_decay: float = 5e-4
) -> GCN:
    """Full-batch Adam on the client's training nodes, on the graph of the seen nodes."""
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    k = g.n_seen
    x, y, mask = g.x[:k], g.y[:k], g.train[:k]
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x, g.adj_seen)[mask], y[mask])
        loss.backward()
        opt.step()
    return model


@torch.inference_mode()
def accuracy(model: GCN, g: ClientGraph) -> dict[str, float]:
    """The model on the grown graph: its own label distribution (``test``) and the new nodes with
    the unseen one (``unseen``)."""
    pred = model(g.x, g.adj).argmax(1)
    hit = (pred == g.y).float()
    return {"test": float(hit[g.test].mean()), "unseen": float(hit[g.unseen].mean())}
