"""Row 109 (Battaglia et al. 2018): the shortest-path task, the graph network and the flat MLP, the
node-accuracy probe, and the judge of ``graphs.relational_sizes`` on hand-built tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.sparse.csgraph import shortest_path

from genlab.claims import CLAIMS
from genlab.errors import SpecError
from genlab.losses import IGNORE
from genlab.probes.node_accuracy import node_scores
from genlab.registry import NoParams
from genlab.tasks import TASKS
from genlab.tasks.graph_paths import ShortestPathParams, graph_shortest_path

CLAIM = CLAIMS.get("graphs.relational_sizes").obj
SMALL = ShortestPathParams(
    train_min=5, train_max=8, test_min=10, test_max=12, n_train=12, n_val=4, n_test=6
)


def test_shapes_padding_and_sizes():
    data = graph_shortest_path(SMALL, 0)
    w = 12
    assert data.info.kind == "sequence" and data.info.n_outputs == 2
    assert data.train["main"].x.shape == (12, w, w + 3) and data.test["large"].y.shape == (6, w)
    for split, (lo, hi) in ((data.train["main"], (5, 8)), (data.test["large"], (10, 12))):
        nodes = split.x[..., w].sum(1)
        assert ((nodes >= lo) & (nodes <= hi)).all()
        pad = split.x[..., w] == 0
        assert (split.y[pad] == IGNORE).all() and (split.x[pad] == 0).all()


def test_labels_are_the_shortest_path_between_the_ends():
    data = graph_shortest_path(SMALL, 3)
    x, y = data.test["large"].x, data.test["large"].y
    w = 12
    for g in range(len(x)):
        n = int(x[g, :, w].sum())
        weights = x[g, :n, :n].double().numpy()
        assert np.allclose(weights, weights.T) and (np.diag(weights) == 0).all()
        s, e = int(x[g, :, w + 1].argmax()), int(x[g, :, w + 2].argmax())
        d = shortest_path(weights, directed=False)
        assert np.isfinite(d).all()  # connected
        on = [v for v in range(n) if v not in (s, e) and np.isclose(d[s, v] + d[v, e], d[s, e])]
        assert y[g, s] == IGNORE and y[g, e] == IGNORE
        assert sorted(torch.nonzero(y[g, :n] == 1).flatten().tolist()) == on


def test_same_seed_same_graphs_other_seed_other_graphs():
    a, b, c = (graph_shortest_path(SMALL, s) for s in (1, 1, 2))
    assert torch.equal(a.test["large"].x, b.test["large"].x)
    assert not torch.equal(a.train["main"].x, c.train["main"].x)


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"train_min": 9, "train_max": 8}, "train_min"),
        ({"test_min": 20, "test_max": 12}, "test_min"),
        ({"pad_to": 10}, "pad_to"),
        ({"k_nearest": 5, "train_min": 5}, "k_nearest"),
    ],
)
def test_bad_params_name_the_field(bad, field):
    with pytest.raises(SpecError, match=field):
        TASKS.params("graph_shortest_path", {**SMALL.model_dump(), **bad}, "task.params")
    with pytest.raises(SpecError, match="pad_to"):
        CLAIM.config("full", {"pad_to": 32})


@pytest.mark.parametrize("model", ["graph_net", "graph_mlp"])
def test_models_read_padded_graphs_and_refuse_other_tasks(model):
    if model == "graph_net":
        pytest.importorskip("torch_geometric", reason="pip install 'genlab[graphs]'")
    from genlab.data import TaskInfo
    from genlab.models import MODELS

    entry = MODELS.get(model)
    data = graph_shortest_path(SMALL, 0)
    torch.manual_seed(0)
    net = entry.obj(entry.params(), data.info)
    x = data.test["large"].x
    out = net(x)
    assert out.shape == (6, 12, 2) and torch.isfinite(out).all()
    torch.manual_seed(0)
    again = entry.obj(entry.params(), data.info)
    assert torch.equal(again(x), out)  # deterministic
    with pytest.raises(ValueError, match="weighted graphs"):
        entry.obj(
            entry.params(),
            TaskInfo(
                kind="regression",
                n_outputs=3,
                input_shape=(5,),
                extra={"graph_nodes": 5, "node_features": 2},
            ),
        )


def test_graph_net_is_size_agnostic_and_ignores_padding():
    pytest.importorskip("torch_geometric", reason="pip install 'genlab[graphs]'")
    from genlab.models import MODELS

    entry = MODELS.get("graph_net")
    wide = graph_shortest_path(SMALL.model_copy(update={"pad_to": 20}), 0)
    narrow = graph_shortest_path(SMALL, 0)
    torch.manual_seed(0)
    net = entry.obj(entry.params(), wide.info)
    torch.manual_seed(0)
    net12 = entry.obj(entry.params(), narrow.info)
    # the same graph padded to 20 or 12 slots: the same logits on its real nodes
    a = net(wide.test["large"].x)[:, :12]
    b = net12(narrow.test["large"].x)
    real = narrow.test["large"].x[..., 12] > 0
    assert torch.allclose(a[real], b[real], atol=1e-5)
    assert (a[~real] == 0).all()


def test_node_scores():
    logits = torch.tensor([[[0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]])
    y = torch.tensor([[1, 0, 1, IGNORE]])
    acc, bal = node_scores(logits, y)
    assert acc == pytest.approx(2 / 3) and bal == pytest.approx((0.5 + 1.0) / 2)


def test_node_accuracy_refuses_class_labels():
    from genlab.data import Split, TaskData, TaskInfo
    from genlab.probes import PROBES
    from genlab.probes.base import EvalContext

    data = TaskData(
        {"main": Split(torch.zeros(2, 3), torch.zeros(2, dtype=torch.long))},
        {},
        {},
        TaskInfo(kind="classification", n_outputs=2, input_shape=(3,)),
    )
    with pytest.raises(SpecError, match="node_accuracy"):
        PROBES.get("node_accuracy").obj(
            torch.nn.Identity(), EvalContext(torch.nn.Identity(), data, 0), NoParams()
        )


def table(
    gn: tuple[float, float], mlp: tuple[float, float], seeds: int = 3, spread: float = 0.01
) -> pd.DataFrame:
    rows = []
    for s in range(seeds):
        d = spread * (s - 1)
        for m, (small, large) in (("gn", gn), ("mlp", mlp)):
            rows.append(
                {
                    "model": m,
                    "seed": s,
                    "data_seed": s,
                    "small": small + d,
                    "large": large - d,
                    "solved_small": 0.5,
                    "solved_large": 0.3,
                }
            )
    t = pd.DataFrame(rows)
    t["status"], t["run_id"] = "done", [f"r{i}" for i in range(len(t))]
    return t


@pytest.mark.parametrize(
    ("gn", "mlp", "verdict"),
    [
        ((0.95, 0.92), (0.85, 0.55), "reproduced"),
        ((0.95, 0.92), (0.85, 0.83), "not reproduced"),  # the MLP holds as well
        ((0.95, 0.70), (0.85, 0.50), "not reproduced"),  # the GN falls by 0.25
        ((0.95, 0.87), (0.85, 0.55), "inconclusive"),  # the GN's drop straddles 0.10
        ((0.60, 0.58), (0.85, 0.55), "inconclusive"),  # the GN did not learn the task
        ((0.95, 0.52), (0.85, 0.51), "inconclusive"),  # every arm at chance on large graphs
    ],
    ids=["holds", "mlp-holds", "gn-falls", "straddles", "unfit", "floor"],
)
def test_judge(gn, mlp, verdict):
    cfg = CLAIM.config("full")
    spread = 0.03 if verdict == "inconclusive" and gn[1] == 0.87 else 0.01
    r = CLAIM.evaluate(cfg, table(gn, mlp, spread=spread))
    assert r.verdict == verdict, r.evidence


@pytest.mark.parametrize("case", ["effect", "null", "unfit"])
def test_synthetic_reaches_each_decision(case):
    cfg = CLAIM.config("full")
    r = CLAIM.evaluate(cfg, CLAIM.synthetic_table(cfg, case))
    want = {"effect": "reproduced", "null": "not reproduced", "unfit": "inconclusive"}[case]
    assert r.verdict == want, r.evidence


def test_controls_change_only_the_test_sizes():
    full = CLAIM.config("full")
    for name in ("negative", "positive"):
        c = CLAIM.config("full", control=name)
        diff = {k for k, v in c.model_dump().items() if full.model_dump()[k] != v}
        assert diff == {"test_min", "test_max"}
        assert {a.spec.run_id for a in CLAIM.arms(c)}.isdisjoint(
            a.spec.run_id for a in CLAIM.arms(full)
        )
