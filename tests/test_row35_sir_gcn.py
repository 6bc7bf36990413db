"""Row 35 (SIR-GCN, #35): the graph task's targets, the PyG models (``graphs`` extra), and the
judge of ``graphs.sir_gcn`` on hand-built tables, one per verdict."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from genlab.claims import CLAIMS
from genlab.tasks.graph_nodes import GraphNodeParams, graph_node_targets

CLAIM = CLAIMS.get("graphs.sir_gcn").obj


def test_heterophily_counts_neighbours_of_another_class():
    data = graph_node_targets(GraphNodeParams(n_nodes=5, n_train=3, n_test=2), 0)
    x, y = data.train["main"].x, data.train["main"].y
    adj, cls = x[..., :5], x[..., 5:].argmax(-1)
    for g in range(3):
        for v in range(5):
            want = sum(int(adj[g, v, u]) for u in range(5) if cls[g, u] != cls[g, v])
            assert y[g, v] == want
    assert torch.equal(adj, adj.transpose(1, 2)) and adj.diagonal(dim1=1, dim2=2).sum() == 0


def test_class_sum_sums_the_neighbours_classes():
    data = graph_node_targets(GraphNodeParams(target="class_sum", n_nodes=5, n_train=3), 1)
    x, y = data.train["main"].x, data.train["main"].y
    adj, cls = x[..., :5], x[..., 5:].argmax(-1).float()
    assert torch.allclose(y, (adj @ cls.unsqueeze(2)).squeeze(2))


def test_sir_conv_message_depends_on_both_ends():
    pytest.importorskip("torch_geometric", reason="pip install 'genlab[graphs]'")
    from genlab.models._pyg import SIRConv

    torch.manual_seed(0)
    conv = SIRConv(2, 4, 3)
    edges = torch.tensor([[1, 2], [0, 0]])  # nodes 1 and 2 send to node 0
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    want = conv.relation(torch.relu(conv.query(x[0]) + conv.key(x[1:])).sum(0))
    assert torch.allclose(conv(x, edges)[0], want, atol=1e-6)
    x2 = x.clone()
    x2[0] = torch.tensor([0.0, 1.0])  # the receiver changes: so does what it receives
    assert not torch.allclose(
        conv(x2, edges)[0] - conv.relation.bias, conv(x, edges)[0] - conv.relation.bias
    )


@pytest.mark.parametrize("model", ["pyg_gcn", "gin", "sir_gcn"])
def test_models_read_dense_graphs_and_refuse_other_tasks(model):
    pytest.importorskip("torch_geometric", reason="pip install 'genlab[graphs]'")
    from genlab.data import TaskInfo
    from genlab.models import MODELS

    entry = MODELS.get(model)
    data = graph_node_targets(GraphNodeParams(n_nodes=6, n_train=4, n_test=2), 0)
    net = entry.obj(entry.params(), data.info)
    assert net(data.train["main"].x).shape == (4, 6)
    with pytest.raises(ValueError, match="dense graphs"):
        entry.obj(entry.params(), TaskInfo(kind="regression", n_outputs=3, input_shape=(5,)))


def table(r2: dict[str, list[float]], train_sir: float = 1.0) -> pd.DataFrame:
    rows = [
        {
            "model": m,
            "seed": s,
            "data_seed": s,
            "test": v,
            "train": train_sir if m == "sir_gcn" else v,
        }
        for m, vals in r2.items()
        for s, v in enumerate(vals)
    ]
    t = pd.DataFrame(rows)
    t["status"], t["run_id"] = "done", [f"r{i}" for i in range(len(t))]
    return t


SIR = [0.999, 0.998, 0.999, 0.999]


@pytest.mark.parametrize(
    ("gin", "train_sir", "verdict"),
    [
        ([0.80, 0.82, 0.79, 0.81], 1.0, "reproduced"),
        ([0.995, 0.996, 0.997, 0.995], 1.0, "not reproduced"),  # GIN as good: no gain
        ([0.80, 0.99, 0.97, 0.999], 1.0, "inconclusive"),  # the gain's CI straddles 0.05
        ([0.80, 0.82, 0.79, 0.81], 0.5, "inconclusive"),  # SIR-GCN did not fit
    ],
    ids=["gain", "no-gain", "straddles", "unfit"],
)
def test_sir_gcn_judge(gin, train_sir, verdict):
    cfg = CLAIM.config("full")
    t = table({"gcn": [0.3, 0.31, 0.29, 0.3], "gin": gin, "sir_gcn": SIR}, train_sir)
    r = CLAIM.evaluate(cfg, t)
    assert r.verdict == verdict, r.evidence
    if verdict == "reproduced":
        assert r.statistic["gain"] == pytest.approx(0.9988 - 0.805, abs=1e-3)


def test_the_baseline_is_the_better_one_per_seed():
    cfg = CLAIM.config("full")
    t = table({"gcn": [0.999, 0.2, 0.2, 0.2], "gin": [0.2, 0.999, 0.999, 0.999], "sir_gcn": SIR})
    assert CLAIM.evaluate(cfg, t).verdict == "not reproduced"


def test_controls_change_only_what_they_name():
    full = CLAIM.config("full")
    neg, pos = (CLAIM.config("full", control=c) for c in ("negative", "positive"))
    assert neg.target == "class_sum" and pos.gin_mlp_layers == 1
    own = {a.spec.run_id for a in CLAIM.arms(full)}
    shared = {a.spec.run_id for a in CLAIM.arms(pos) if a.labels["model"] != "gin"}
    assert shared <= own  # the positive control retrains only GIN
