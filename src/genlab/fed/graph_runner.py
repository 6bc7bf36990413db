"""Run a federated graph ``RunSpec`` (``genlab.fed.graph_spec``) into the store: FedAvg or the
simplified FedLoG (Kim et al. 2024, #78) over per-client SBM graphs, on Flower's strategy API.

Each round (one ``step``): the strategy sends the global GCN (and FedLoG's synthetic nodes) to the
clients, each trains ``fed.local_steps`` full-batch steps on its graph and reports its *local*
model's accuracy on its own held-out nodes and on the nodes that arrive with an unseen label
distribution; the strategy averages the models; every client then evaluates the global model.
Metrics per round (node-weighted means over clients): ``local/unseen:accuracy`` (FedLoG's
metric: the local models on the new nodes), ``local/own:accuracy`` (on their own held-out nodes),
``global/unseen:accuracy``, ``global/own:accuracy`` (the averaged model), per client
``client/i:local_unseen`` and their worst ``fed:local_unseen_worst``, ``fed:train_loss`` and
``fed:update_dissimilarity``; round 0 is the initial global model. The global model and the synthetic nodes are checkpointed after every
round: client training is deterministic, so a killed run resumes with the same numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from genlab.engine.seeding import seed_everything
from genlab.engine.train import Metrics, RunResult
from genlab.errors import SpecError
from genlab.fed.graph_spec import graph_json
from genlab.fed.rounds import flower_rounds, with_lease
from genlab.spec import RunSpec
from genlab.store import Store


def run_graph_federated(
    spec: RunSpec,
    store: Store,
    progress: bool = True,
    on_eval: Callable[[int, Metrics], None] | None = None,
    wait: bool = False,
    restart: bool = False,
    threads: int | None = None,
) -> RunResult:
    """Train the federated graph ``spec`` into ``store``; see the module docstring."""
    from genlab.fed.graph_apps import _graphs
    from genlab.fed.graphs import GCN

    try:
        _graphs(graph_json(spec))  # graphs that cannot be drawn are bad input: before writing
    except ValueError as exc:
        raise SpecError(f"task {spec.task.name!r}: {exc}") from None
    seed_everything(spec.seed)
    task = spec.task.params
    model = GCN(task["dim"], task["classes"], spec.model.params["hidden"])
    return with_lease(
        spec,
        store,
        model,
        wait,
        restart,
        threads,
        lambda state: _rounds(spec, model, store, state, progress, on_eval),
    )


def _rounds(
    spec: RunSpec,
    model: Any,
    store: Store,
    state: dict | None,
    progress: bool,
    on_eval: Callable[[int, Metrics], None] | None,
) -> RunResult:
    from flwr.app import ArrayRecord, ConfigRecord

    from genlab.engine.optim import build_optimizer
    from genlab.fed.graph_apps import make_graph_client_app, make_graph_strategy
    from genlab.fed.grid import LocalGrid

    fed, meth = spec.fed, spec.method.params
    assert fed is not None
    app = make_graph_client_app(
        graph_json(spec),
        fed.local_steps,
        weight=meth.get("weight", 1.0),
        min_nodes=meth.get("min_nodes", 5),
        hidden=spec.model.params["hidden"],
        optimizer=lambda m: build_optimizer(m, spec.optimizer),
    )
    grid = LocalGrid(app, list(range(fed.clients)))
    strategy = make_graph_strategy(
        spec.method.name, spec.seed, meth.get("per_class", 20), fed.fraction_train
    )

    def evaluate(rnd: int) -> Metrics:
        msgs = strategy.configure_evaluate(
            rnd, ArrayRecord(model.state_dict()), ConfigRecord(), grid
        )
        got = strategy.aggregate_evaluate(rnd, grid.send_and_receive(msgs)) or {}
        return {
            ("global/own", "accuracy"): float(got["global_test"]),
            ("global/unseen", "accuracy"): float(got["global_unseen"]),
        }

    def measure(rnd: int, replies: list, agg: Any) -> Metrics:
        if not rnd:
            return evaluate(0)
        out = _client_metrics(replies, grid.nodes)
        out[("local/own", "accuracy")] = float(agg["local_test"])
        out[("local/unseen", "accuracy")] = float(agg["local_unseen"])
        return out | evaluate(rnd)

    return flower_rounds(
        spec, store, model, strategy, grid, state, measure, "synthetic", progress, on_eval
    )


def _client_metrics(replies: list, nodes: dict[int, int]) -> Metrics:
    """``client/i:local_unseen`` per replying client and their worst, ``fed:local_unseen_worst``."""
    acc = {
        nodes[m.metadata.src_node_id]: float(m.content["metrics"]["local_unseen"])
        for m in replies
        if not m.has_error()
    }
    out: Metrics = {(f"client/{i}", "local_unseen"): a for i, a in sorted(acc.items())}
    if acc:
        out[("fed", "local_unseen_worst")] = min(acc.values())
    return out
