"""Graph FL on Flower (``fed.fedlog``, #78): FedAvg and the simplified FedLoG run for real over the
in-process Flower grid, and FedLoG's synthetic nodes come from the pooled reliable class statistics
only. The paired measurement (5 seeds, alpha 0.1 vs 100) is the claim's positive control, run by
``test_claims_controls.py``."""

from __future__ import annotations

import math

import pytest
import torch

pytest.importorskip("flwr", reason="pip install 'genlab[fl]'")

from flwr.app import ConfigRecord  # noqa: E402

from genlab.fed.graph_apps import run_graph_fed, synthetic_nodes  # noqa: E402


@pytest.mark.parametrize("method", ["fedavg", "fedlog"])
def test_two_clients_two_rounds_through_flower(method: str) -> None:
    rounds = run_graph_fed(method, rounds=2, seed=0, clients=2, nodes=80, new_nodes=40)
    assert [r["round"] for r in rounds] == [1, 2]
    for key in ("local_test", "local_unseen", "global_test", "global_unseen", "train_loss"):
        assert all(0 <= r[key] <= 1 or key == "train_loss" for r in rounds), key
        assert not math.isnan(rounds[-1][key])
    again = run_graph_fed(method, rounds=2, seed=0, clients=2, nodes=80, new_nodes=40)
    assert again == rounds  # deterministic in the seed


def test_synthetic_nodes_pool_reliable_classes_only() -> None:
    dim = 2
    a = ConfigRecord(
        {
            "count": [10.0, 0.0, 0.0],
            "sum": [10.0, 20.0, 0.0, 0.0, 0.0, 0.0],
            "sumsq": [10.0, 40.0, 0.0, 0.0, 0.0, 0.0],
        }
    )  # class 0: mean (1, 2), var 0
    b = ConfigRecord(
        {
            "count": [10.0, 5.0, 0.0],
            "sum": [30.0, 40.0, -5.0, 5.0, 0.0, 0.0],
            "sumsq": [90.0, 160.0, 5.0, 5.0, 0.0, 0.0],
        }
    )
    x, y = synthetic_nodes([a, b], per_class=50, seed=0)
    x = torch.tensor(x).view(-1, dim)
    y = torch.tensor(y)
    assert sorted(set(y.tolist())) == [0, 1]  # class 2: no client holds it, no nodes
    assert torch.allclose(x[y == 0].mean(0), torch.tensor([2.0, 3.0]), atol=0.5)  # pooled mean
    assert torch.allclose(x[y == 1].mean(0), torch.tensor([-1.0, 1.0]), atol=0.01)  # var 0
