"""Graph federated learning on Flower: FedAvg and a simplified FedLoG (Kim et al. 2024, #78) over
the SBM clients of ``genlab.fed.graphs``; ``genlab.fed.graph_runner`` runs them from a RunSpec into
the store, which is what the ``fed.fedlog`` claim reads.

FedLoG's idea, simplified as the catalogue's CPU design allows ("global synthetic nodes from class
prototypes"): each client reports, per class, the count, sum and sum of squares of its training
nodes' two-hop aggregated features ``A^2 X`` (the input a 2-layer GCN sees), for the classes it
holds reliably (at least ``min_nodes`` nodes); the server pools them into global class-conditional
Gaussians and sends ``per_class`` synthetic nodes per class, sampled from them; clients train on
their own graph plus the synthetic nodes (isolated: the propagation is the identity), weighted
``weight``, which fills in the classes absent locally. The metric is the paper's: the accuracy of
each client's *local* model (after its last local training) on nodes that arrive with an unseen
label distribution; the global model's is reported too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import torch
from flwr.app import ArrayRecord, ConfigRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid
from flwr.serverapp.strategy import FedAvg, Strategy
from torch import nn

from genlab.fed.graphs import GCN, ClientGraph, accuracy, sbm_clients


@lru_cache(maxsize=4)
def _graphs(graph_json: str) -> list[ClientGraph]:
    return sbm_clients(**json.loads(graph_json))


def _stats(g: ClientGraph, classes: int, min_nodes: int) -> ConfigRecord:
    k = g.n_seen
    h = g.adj_seen @ (g.adj_seen @ g.x[:k])
    y, m = g.y[:k], g.train[:k]
    count = torch.stack([(m & (y == c)).sum() for c in range(classes)]).double()
    count[count < min_nodes] = 0  # unreliable classes are not shared
    s = torch.stack(
        [
            h[m & (y == c)].double().sum(0)
            if count[c]
            else torch.zeros(h.shape[1], dtype=torch.float64)
            for c in range(classes)
        ]
    )
    sq = torch.stack(
        [
            (h[m & (y == c)].double() ** 2).sum(0)
            if count[c]
            else torch.zeros(h.shape[1], dtype=torch.float64)
            for c in range(classes)
        ]
    )
    return ConfigRecord(
        {"count": count.tolist(), "sum": s.flatten().tolist(), "sumsq": sq.flatten().tolist()}
    )


def make_graph_client_app(
    graph_json: str,
    local_steps: int = 10,
    lr: float = 0.01,
    weight: float = 1.0,
    min_nodes: int = 5,
    hidden: int = 32,
    optimizer: Callable[[GCN], torch.optim.Optimizer] | None = None,
) -> ClientApp:
    """A ``ClientApp`` whose partition ``i`` is SBM client ``i`` of ``sbm_clients(**graph)``.
    ``optimizer`` builds each round's local optimiser (default: Adam, ``lr``, weight decay
    5e-4)."""
    app = ClientApp()
    graph = json.loads(graph_json)
    dim, classes = graph.get("dim", 16), graph.get("classes", 5)
    make_opt = optimizer or (lambda m: torch.optim.Adam(m.parameters(), lr=lr, weight_decay=5e-4))

    def _setup(msg: Message, context: Context) -> tuple[ClientGraph, GCN]:
        g = _graphs(graph_json)[int(context.node_config["partition-id"])]
        model = GCN(dim, classes, hidden)
        model.load_state_dict(msg.content["arrays"].to_torch_state_dict())
        return g, model

    @app.train()
    def train(msg: Message, context: Context) -> Message:
        g, model = _setup(msg, context)
        cfg = msg.content["config"]
        syn = None
        if "syn-y" in cfg:
            sy = torch.tensor(cfg["syn-y"], dtype=torch.long)
            syn = torch.tensor(cfg["syn-x"], dtype=torch.float32).view(len(sy), -1), sy
        opt = make_opt(model)
        k = g.n_seen
        x, y, mask = g.x[:k], g.y[:k], g.train[:k]
        total = 0.0
        for _ in range(local_steps):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x, g.adj_seen)[mask], y[mask])
            if syn is not None:
                eye = torch.eye(len(syn[1]))
                loss = loss + weight * nn.functional.cross_entropy(model(syn[0], eye), syn[1])
            loss.backward()
            opt.step()
            total += loss.item()
        local = accuracy(model, g)
        metrics = {
            "train_loss": total / local_steps,
            "local_test": local["test"],
            "local_unseen": local["unseen"],
            "num-examples": int(mask.sum()),
        }
        content = RecordDict(
            {"arrays": ArrayRecord(model.state_dict()), "metrics": MetricRecord(metrics)}
        )
        if cfg.get("want-stats", False):
            content["class-stats"] = _stats(g, classes, min_nodes)
        return Message(content, reply_to=msg)

    @app.evaluate()
    def evaluate(msg: Message, context: Context) -> Message:
        g, model = _setup(msg, context)
        acc = accuracy(model, g)
        metrics = MetricRecord(
            {
                "global_test": acc["test"],
                "global_unseen": acc["unseen"],
                "num-examples": int(g.unseen.sum()),
            }
        )
        return Message(RecordDict({"metrics": metrics}), reply_to=msg)

    return app


class FedLoGStrategy(FedAvg):
    """FedAvg that pools the clients' reliable class statistics into global synthetic nodes."""

    def __init__(self, per_class: int = 20, seed: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.per_class, self.seed = per_class, seed
        self.synthetic: tuple[list[float], list[int]] | None = None

    def configure_train(
        self, server_round: int, arrays: ArrayRecord, config: ConfigRecord, grid: Grid
    ):
        if self.synthetic is None:
            config["want-stats"] = True
        else:
            config["syn-x"], config["syn-y"] = self.synthetic
        return super().configure_train(server_round, arrays, config, grid)

    def aggregate_train(self, server_round: int, replies):  # noqa: ANN001, ANN201
        replies = list(replies)
        got = [
            m.content["class-stats"]
            for m in replies
            if not m.has_error() and "class-stats" in m.content
        ]
        if got and self.synthetic is None:
            self.synthetic = synthetic_nodes(got, self.per_class, self.seed)
        return super().aggregate_train(server_round, replies)


def synthetic_nodes(stats: list[ConfigRecord], per_class: int, seed: int):  # noqa: ANN201
    """``per_class`` nodes per class held reliably by some client, drawn from the pooled
    class-conditional diagonal Gaussians of ``A^2 X``; classes no client holds get none."""
    count = torch.tensor([r["count"] for r in stats], dtype=torch.float64).sum(0)
    k = len(count)
    s = torch.tensor([r["sum"] for r in stats], dtype=torch.float64).sum(0).view(k, -1)
    sq = torch.tensor([r["sumsq"] for r in stats], dtype=torch.float64).sum(0).view(k, -1)
    gen = torch.Generator().manual_seed(seed)
    xs, ys = [], []
    for c in range(k):
        if count[c] == 0:
            continue
        mean = s[c] / count[c]
        std = (sq[c] / count[c] - mean**2).clamp_min(1e-6).sqrt()
        xs.append(mean + std * torch.randn(per_class, len(mean), generator=gen, dtype=s.dtype))
        ys += [c] * per_class
    return torch.cat(xs).float().flatten().tolist(), ys


def make_graph_strategy(
    method: str, seed: int = 0, per_class: int = 20, fraction_train: float = 1.0
) -> Strategy:
    """Flower's ``FedAvg`` or ``FedLoGStrategy``; every client evaluates every round."""
    common = {
        "fraction_train": fraction_train,
        "fraction_evaluate": 1.0,
        "min_train_nodes": 1,
        "min_evaluate_nodes": 1,
        "min_available_nodes": 1,
    }
    if method == "fedlog":
        return FedLoGStrategy(per_class=per_class, seed=seed, **common)
    if method == "fedavg":
        return FedAvg(**common)
    raise ValueError(f"method={method!r}: fedavg or fedlog")


def run_graph_fed(
    method: str = "fedavg", rounds: int = 20, seed: int = 0, local_steps: int = 10, **graph: Any
) -> list[dict[str, float]]:
    """Rounds of ``method`` over ``sbm_clients(seed=seed, **graph)`` on ``LocalGrid`` (Flower's
    ``Grid`` in-process); per round, the aggregated client metrics (weighted by nodes)."""
    from genlab.fed.flower import require_flwr
    from genlab.fed.grid import LocalGrid

    require_flwr()  # quietens Flower's per-round log lines
    graph_json = json.dumps({"seed": seed, **graph}, sort_keys=True)
    n = graph.get("clients", 5)
    app = make_graph_client_app(graph_json, local_steps=local_steps)
    grid = LocalGrid(app, list(range(n)))
    strategy = make_graph_strategy(method, seed)
    torch.manual_seed(seed)
    arrays = ArrayRecord(GCN(graph.get("dim", 16), graph.get("classes", 5)).state_dict())
    out = []
    for rnd in range(1, rounds + 1):
        msgs = strategy.configure_train(rnd, arrays, ConfigRecord(), grid)
        new, train_m = strategy.aggregate_train(rnd, grid.send_and_receive(msgs))
        arrays = new if new is not None else arrays
        msgs = strategy.configure_evaluate(rnd, arrays, ConfigRecord(), grid)
        eval_m = strategy.aggregate_evaluate(rnd, grid.send_and_receive(msgs))
        out.append({"round": rnd, **dict(train_m or {}), **dict(eval_m or {})})
    return out
