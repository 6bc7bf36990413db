"""Row 94 (Knyazev et al. 2020): the synthetic scene graphs, the density-normalised edge loss, the
per-edge MLP, triplet recall, and the judge of ``graphs.density_loss`` on hand-built tables."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from genlab.claims import CLAIMS
from genlab.errors import SpecError
from genlab.losses import IGNORE
from genlab.methods.density_edge_loss import edge_weights
from genlab.probes.triplet_recall import counts, recalled, triplets
from genlab.tasks import TASKS
from genlab.tasks.relation_graphs import RelationParams, relation_graphs

CLAIM = CLAIMS.get("graphs.density_loss").obj
SMALL = RelationParams(
    classes=4,
    predicates=3,
    dim=4,
    small_nodes=3,
    large_nodes=6,
    fg_edges=3,
    n_train=40,
    n_val=10,
    n_test=10,
)


def test_shapes_and_graph_kinds():
    data = relation_graphs(SMALL, 0)
    x, y = data.train["main"].x, data.train["main"].y
    assert x.shape == (40, 36, 4 + 4 + 4 + 1) and y.shape == (40, 36)
    assert data.info.kind == "sequence" and data.info.n_outputs == 4
    scored = (y != IGNORE).sum(1)
    assert set(scored.tolist()) <= {3 * 2, 6 * 5}  # small or large graphs
    assert ((y > 0).sum(1) == 3).all()  # fg_edges per graph
    assert (x[y == IGNORE] == 0).all() and (x[y != IGNORE][:, -1] == 1).all()


def test_zero_shot_triplets_are_held_out_of_training_only():
    p = SMALL.model_copy(update={"n_train": 200, "n_test": 200, "zero_share": 0.5})
    data = relation_graphs(p, 1)
    seen = counts(data.train["main"].x, data.train["main"].y, 4, 3)
    test = counts(data.test["main"].x, data.test["main"].y, 4, 3)
    assert ((test > 0) & (seen == 0)).any()  # some test triplets never occur in training


def test_same_seed_same_graphs():
    a, b = relation_graphs(SMALL, 2), relation_graphs(SMALL, 2)
    assert torch.equal(a.train["main"].x, b.train["main"].x)
    assert not torch.equal(a.train["main"].x, relation_graphs(SMALL, 3).train["main"].x)


def test_bad_params_name_the_field():
    with pytest.raises(SpecError, match="fg_edges"):
        TASKS.params("relation_graphs", {"small_nodes": 3, "fg_edges": 7}, "task.params")
    with pytest.raises(SpecError, match="pad_to"):
        TASKS.params("relation_graphs", {"pad_to": 5}, "task.params")
    with pytest.raises(SpecError, match="normalize"):
        from genlab.methods import METHODS

        METHODS.params("density_edge_loss", {"normalize": "nodes"}, "method.params")


def test_edge_weights():
    # a dense graph (2 fg of 4 edges) and a sparse one (1 fg of 6 edges), padded to 6
    y = torch.tensor([[1, 0, 2, 0, IGNORE, IGNORE], [0, 0, 3, 0, 0, 0]])
    base = edge_weights(y, "edges")
    assert torch.allclose(base[0], torch.tensor([0.25] * 4 + [0, 0]))
    assert torch.allclose(base[1], torch.full((6,), 1 / 6))
    dnorm = edge_weights(y, "foreground")
    assert torch.allclose(dnorm[0], torch.tensor([0.5] * 4 + [0, 0]))
    assert torch.allclose(dnorm[1], torch.ones(6))  # the sparse graph's fg edge weighs 1, not 1/6
    fgbg = edge_weights(y, "fgbg")
    assert torch.allclose(fgbg[1], torch.tensor([0.2, 0.2, 1.0, 0.2, 0.2, 0.2]))
    none = edge_weights(torch.tensor([[0, 0, IGNORE]]), "foreground")
    assert torch.allclose(none, torch.tensor([[0.5, 0.5, 0.0]]))  # no fg: the plain mean


def test_method_and_model_train_one_step_and_refuse_other_tasks():
    from genlab.data import TaskInfo
    from genlab.methods import METHODS
    from genlab.models import MODELS

    data = relation_graphs(SMALL, 0)
    torch.manual_seed(0)
    net = MODELS.get("edge_mlp").obj(MODELS.get("edge_mlp").params(), data.info)
    out = net(data.val["main"].x)
    assert out.shape == (10, 36, 4)
    method = METHODS.get("density_edge_loss").obj(
        METHODS.get("density_edge_loss").params(), data.info
    )
    loss, _ = method.loss(net, {"main": (data.train["main"].x[:4], data.train["main"].y[:4])})
    loss.backward()
    assert torch.isfinite(loss) and net.net[0].weight.grad.abs().sum() > 0
    cls = TaskInfo(kind="classification", n_outputs=3, input_shape=(5,))
    with pytest.raises(ValueError, match="sequence"):
        METHODS.get("density_edge_loss").obj(METHODS.get("density_edge_loss").params(), cls)
    with pytest.raises(ValueError, match="dense rows"):
        MODELS.get("edge_mlp").obj(MODELS.get("edge_mlp").params(), cls)


def test_recall_at_k():
    # one graph, 3 edges, 2 predicates (+ background); gt: edge 0 pred 1, edge 2 pred 2
    y = torch.tensor([[1, 0, 2]])
    logits = torch.log(torch.tensor([[[0.1, 0.8, 0.1], [0.2, 0.7, 0.1], [0.5, 0.3, 0.2]]]))
    where = torch.nonzero(y > 0).T
    assert recalled(logits, y, 1, where).tolist() == [True, False]
    assert recalled(logits, y, 3, where).tolist() == [True, False]  # 0.2 is 5th of 6
    assert recalled(logits, y, 5, where).tolist() == [True, True]
    x = torch.zeros(1, 3, 5)
    x[0, :, 0] = 1  # subject class 0
    x[0, :, 3] = 1  # object class 1
    _, s, p, o = triplets(x, y, 2)
    assert s.tolist() == [0, 0] and p.tolist() == [1, 2] and o.tolist() == [1, 1]


def test_triplet_recall_probe_refuses_other_tasks():
    from genlab.data import Split, TaskData, TaskInfo
    from genlab.probes import PROBES
    from genlab.probes.base import EvalContext

    data = TaskData(
        {"main": Split(torch.zeros(2, 3), torch.zeros(2, dtype=torch.long))},
        {},
        {},
        TaskInfo(kind="classification", n_outputs=2, input_shape=(3,)),
    )
    entry = PROBES.get("triplet_recall")
    with pytest.raises(SpecError, match="relation_pairs"):
        entry.obj(torch.nn.Identity(), EvalContext(torch.nn.Identity(), data, 0), entry.params())


def table(edges: list[float], dnorm: list[float], val: float = 0.8) -> pd.DataFrame:
    rows = []
    for s, (a, b) in enumerate(zip(edges, dnorm, strict=True)):
        for loss, z in (("edges", a), ("foreground", b)):
            rows.append(
                {
                    "loss": loss,
                    "seed": s,
                    "data_seed": s,
                    "zero": z,
                    "few": z,
                    "all": 0.8,
                    "val": val,
                }
            )
    t = pd.DataFrame(rows)
    t["status"], t["run_id"] = "done", [f"r{i}" for i in range(len(t))]
    return t


@pytest.mark.parametrize(
    ("edges", "dnorm", "val", "verdict"),
    [
        ([0.40, 0.41, 0.39, 0.40], [0.55, 0.56, 0.54, 0.55], 0.8, "reproduced"),
        ([0.40, 0.41, 0.39, 0.40], [0.41, 0.40, 0.40, 0.41], 0.8, "not reproduced"),
        ([0.40, 0.41, 0.39, 0.40], [0.40, 0.60, 0.42, 0.55], 0.8, "inconclusive"),
        ([0.40, 0.41, 0.39, 0.40], [0.55, 0.56, 0.54, 0.55], 0.4, "inconclusive"),  # unfit
        ([0.01, 0.02, 0.01, 0.01], [0.02, 0.03, 0.04, 0.02], 0.8, "inconclusive"),  # floor
        ([0.98, 0.99, 0.98, 0.99], [0.99, 0.99, 0.99, 0.98], 0.8, "inconclusive"),  # ceiling
    ],
    ids=["gain", "none", "straddles", "unfit", "floor", "ceiling"],
)
def test_judge(edges, dnorm, val, verdict):
    r = CLAIM.evaluate(CLAIM.config("full"), table(edges, dnorm, val))
    assert r.verdict == verdict, r.evidence


@pytest.mark.parametrize("case", ["effect", "null", "unfit"])
def test_synthetic_reaches_each_decision(case):
    cfg = CLAIM.config("full")
    r = CLAIM.evaluate(cfg, CLAIM.synthetic_table(cfg, case))
    want = {"effect": "reproduced", "null": "not reproduced", "unfit": "inconclusive"}[case]
    assert r.verdict == want, r.evidence


def test_controls_change_only_what_they_name():
    full = CLAIM.config("full").model_dump()
    for name, field in (("negative", "swap"), ("positive", "large_nodes")):
        c = CLAIM.config("full", control=name).model_dump()
        assert {k for k in c if c[k] != full[k]} == {field}
