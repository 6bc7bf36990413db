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

import math
import random
import time
from collections.abc import Callable

from genlab.engine import checkpoint
from genlab.engine import threads as threads_mod
from genlab.engine.lease import hold
from genlab.engine.progress import RunProgress
from genlab.engine.train import (
    FINISHED,
    Metrics,
    Prepared,
    RunResult,
    _finished,
    _rows,
    evaluate,
    prepare,
    recorded,
)  # fmt: skip
from genlab.errors import GenlabError, SpecError
from genlab.fed.flower import require_flwr
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
    run_id = spec.run_id
    fed_data(spec.canonical_json())  # a split that cannot be drawn is bad input: before writing
    prep = prepare(spec)
    n_threads = threads_mod.choose(sum(p.numel() for p in prep.model.parameters()), threads)
    with threads_mod.using(n_threads), hold(store, run_id, wait=wait):
        status = store.status(run_id)
        if not restart and status in FINISHED:
            return _finished(store, run_id)
        path = store.run_dir(run_id) / checkpoint.RESUME
        if restart:
            checkpoint.discard(path)
        state = checkpoint.load(path) if status and not restart else None
        store.begin(run_id, spec.canonical_json())
        with recorded(store, run_id, "round"):
            result = _rounds(prep, store, state, progress, on_eval)
    result.threads = n_threads
    return result


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
    from genlab.fed.probes import client_summary, flat_update, update_dissimilarity
    from genlab.fed.strategies import make_strategy

    spec, model = prep.spec, prep.model
    fed, run_id = spec.fed, spec.run_id
    assert fed is not None
    app = make_client_app(spec.canonical_json())
    train_grid = LocalGrid(app, list(range(fed.clients)))
    eval_grid = LocalGrid(app, list(range(fed.clients + fed.held_out)))
    strategy = make_strategy(spec)

    def measure(rnd: int) -> Metrics:
        out = evaluate(prep, rnd)
        msgs = strategy.configure_evaluate(rnd, ArrayRecord(model.state_dict()), ConfigRecord(),
                                           eval_grid)  # fmt: skip
        replies = eval_grid.send_and_receive(msgs)
        acc = {eval_grid.nodes[m.metadata.src_node_id]: float(m.content["metrics"]["accuracy"])
               for m in replies}  # fmt: skip
        out.update(client_summary(acc, fed.clients))
        return out

    start, wall0, resumed_from = 0, 0.0, None
    if state is not None:
        model.load_state_dict(state["model"])
        start, wall0, resumed_from = state["round"], state["wall_s"], state["round"]
        if state.get("stats"):
            strategy.stats = state["stats"]  # type: ignore[attr-defined]
        store.drop_metrics_after(run_id, start)
        last: Metrics = {}
    else:
        store.drop_metrics_after(run_id, -1)
        last = measure(0)
        store.log_metrics(run_id, _rows(0, last))
    t0 = time.perf_counter()
    rnd, status, error = start, "done", None
    title = f"{spec.task.name} · {spec.method.name} · {fed.clients} clients (rounds)"
    with RunProgress(title, spec.steps, start, progress) as bar:
        for rnd in range(start + 1, spec.steps + 1):
            random.seed(spec.seed * 100_003 + rnd)  # Flower samples clients with `random`
            global_sd = {k: v.detach().clone() for k, v in model.state_dict().items()}
            msgs = strategy.configure_train(rnd, ArrayRecord(global_sd), ConfigRecord(), train_grid)
            replies = list(train_grid.send_and_receive(msgs))
            updates = [flat_update(m.content["arrays"].to_torch_state_dict(), global_sd)
                       for m in replies]  # fmt: skip
            arrays, train_metrics = strategy.aggregate_train(rnd, replies)
            if arrays is None or train_metrics is None:
                raise GenlabError(f"round {rnd}: no client replied with a model")
            loss = float(train_metrics["train_loss"])
            if not math.isfinite(loss):
                status, error = "diverged", f"non-finite client loss {loss} in round {rnd}"
                break
            model.load_state_dict(arrays.to_torch_state_dict())
            last = measure(rnd)
            last[("fed", "update_dissimilarity")] = update_dissimilarity(updates)
            last[("fed", "train_loss")] = loss
            store.log_metrics(run_id, _rows(rnd, last))
            bar.show({k: v for k, v in last.items() if not k[0].startswith("client/")})
            bar.advance(rnd)
            wall = wall0 + time.perf_counter() - t0
            if rnd < spec.steps:
                checkpoint.save(store.run_dir(run_id) / checkpoint.RESUME, {
                    "model": model.state_dict(), "round": rnd, "wall_s": wall,
                    "stats": getattr(strategy, "stats", None) or {},
                })  # fmt: skip
            store.progress(run_id, rnd, wall)
            if on_eval is not None:
                on_eval(rnd, last)
    wall = wall0 + time.perf_counter() - t0
    final = {f"{s}:{m}": v for (s, m), v in last.items()}
    summary = {"final": final, "steps": rnd, "rounds": rnd, "stopped_early": False}
    run_dir = store.run_dir(run_id)
    if status == "done":
        checkpoint.save(run_dir / checkpoint.FINAL, {"model": model.state_dict()}, False)
        checkpoint.discard(run_dir / checkpoint.RESUME)
    store.finish(run_id, status, rnd, wall, error=error, summary=summary)
    return RunResult(run_id, status, rnd, wall, final, resumed_from)
