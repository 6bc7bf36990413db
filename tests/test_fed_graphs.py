"""The graph-FL substrate for ``fed.fedlog`` (#78): SBM clients with label-distribution skew,
new nodes with an unseen (uniform) label distribution, and a plain-torch 2-layer GCN."""

from __future__ import annotations

import torch

from genlab.fed.graphs import GCN, accuracy, normalise, sbm_clients, train_local


def test_label_skew_follows_alpha_and_new_nodes_are_uniform() -> None:
    skewed = sbm_clients(clients=5, alpha=0.1, seed=0)
    iid = sbm_clients(clients=5, alpha=100.0, seed=0)
    for g in skewed:  # small alpha: one or two classes hold nearly all of a client's seen nodes
        seen = torch.bincount(g.y[: g.n_seen], minlength=5)
        assert seen.topk(2).values.sum() / seen.sum() > 0.9
    for g in iid:
        seen = torch.bincount(g.y[: g.n_seen], minlength=5)
        assert seen.max() / seen.sum() < 0.35
    new = torch.cat([g.y[g.unseen] for g in skewed])
    assert torch.bincount(new, minlength=5).min() / len(new) > 0.1


def test_graphs_are_symmetric_normalised_and_deterministic() -> None:
    a, b = sbm_clients(clients=2, seed=3), sbm_clients(clients=2, seed=3)
    for g, h in zip(a, b, strict=True):
        assert torch.equal(g.adj, h.adj) and torch.equal(g.x, h.x)
        assert torch.allclose(g.adj, g.adj.T)
        k = g.n_seen  # training sees the seen nodes' graph only
        assert g.adj_seen.shape == (k, k) and not g.unseen[:k].any()
        assert (g.train & g.test).sum() == 0
    ring = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    assert torch.allclose(normalise(ring), torch.full((2, 2), 0.5))


def test_local_models_overfit_their_label_distribution() -> None:
    """The phenomenon FedLoG addresses, measured on the substrate: a client's own GCN is near
    perfect on its own label distribution and far worse on new nodes under skew, not when IID."""
    gaps = {}
    for alpha in (0.1, 100.0):
        res = []
        for g in sbm_clients(clients=2, alpha=alpha, seed=0):
            torch.manual_seed(0)
            res.append(accuracy(train_local(GCN(16, 5), g), g))
        gaps[alpha] = sum(r["test"] - r["unseen"] for r in res) / len(res)
    assert gaps[0.1] > 0.3, gaps
    assert abs(gaps[100.0]) < 0.1, gaps
