"""Run a federated ``RunSpec``: Flower's strategy drives rounds of ClientApps; genlab stores them.

Each round (one ``step`` of the run): the strategy samples clients and sends them the global
arrays (``configure_train``), the ClientApps train locally, the strategy aggregates
(``aggregate_train``); then the global model is probed on the task's splits (the spec's probes),
every client (held-out ones too) evaluates it (``configure_evaluate``), and the round's metrics go
to the store: the probes', ``client/i:accuracy``, ``fed:client_acc_mean``/``_worst``,
``fed:heldout_clients_acc``, ``fed:update_dissimilarity`` and ``fed:train_loss``. After every
round the global model and the strategy's state are checkpointed, so a killed run resumes at its
last finished round with the same numbers (client sampling and local batches are seeded by
round). The run's lease, status and checkpoints are the engine's. A spec whose task is a graph
task (``genlab.fed.graph_spec``) goes to ``genlab.fed.graph_runner`` instead.
"""

from __future__ import annotations

from collections.abc import Callable

from genlab.engine.train import Metrics, Prepared, RunResult, evaluate, prepare
from genlab.errors import SpecError
from genlab.fed.flower import require_flwr
from genlab.fed.rounds import flower_rounds, with_lease
from genlab.spec import RunSpec
from genlab.store import Store


def run_federated(
    spec: RunSpec,
    store: Store,
    progress: bool = True,
    on_eval: Callable[[int, Metrics], None] | None = None,
    wait: bool = False,
    restart: bool = False,
    threads: int | None = None,
) -> RunResult:
    """Train the federated ``spec`` into ``store``; see the module docstring."""
    require_flwr()
    from genlab.fed.data import fed_data
    from genlab.fed.graph_spec import is_graph

    if is_graph(spec.task.name):  # per-client graphs: a run kind of its own (fed.fedlog, #78)
        from genlab.fed.graph_runner import run_graph_federated

        return run_graph_federated(spec, store, progress, on_eval, wait, restart, threads)

    if spec.stop:
        raise SpecError("stop: stop rules are not supported in federated runs (fed)")
    fed_data(spec.canonical_json())  # a split that cannot be drawn is bad input: before writing
    prep = prepare(spec)
    return with_lease(
        spec,
        store,
        prep.model,
        wait,
        restart,
        threads,
        lambda state: _rounds(prep, store, state, progress, on_eval),
    )


def _rounds(
    prep: Prepared,
    store: Store,
    state: dict | None,
    progress: bool,
    on_eval: Callable[[int, Metrics], None] | None,
) -> RunResult:
    from flwr.app import ArrayRecord, ConfigRecord

    from genlab.fed.client import make_client_app
    from genlab.fed.grid import LocalGrid
    from genlab.fed.probes import client_summary
    from genlab.fed.strategies import make_strategy

    spec, model = prep.spec, prep.model
    fed = spec.fed
    assert fed is not None
    app = make_client_app(spec.canonical_json())
    train_grid = LocalGrid(app, list(range(fed.clients)))
    eval_grid = LocalGrid(app, list(range(fed.clients + fed.held_out)))
    strategy = make_strategy(spec)

    def measure(rnd: int) -> Metrics:
        out = evaluate(prep, rnd)
        msgs = strategy.configure_evaluate(
            rnd, ArrayRecord(model.state_dict()), ConfigRecord(), eval_grid
        )
        replies = eval_grid.send_and_receive(msgs)
        acc = {
            eval_grid.nodes[m.metadata.src_node_id]: float(m.content["metrics"]["accuracy"])
            for m in replies
        }
        out.update(client_summary(acc, fed.clients))
        return out

    return flower_rounds(
        spec,
        store,
        model,
        strategy,
        train_grid,
        state,
        lambda rnd, replies, agg: measure(rnd),
        "stats",
        progress,
        on_eval,
    )
