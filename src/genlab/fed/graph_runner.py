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

import math
import random
import time
from collections.abc import Callable
from typing import Any

from genlab.engine import checkpoint
from genlab.engine import threads as threads_mod
from genlab.engine.lease import hold
from genlab.engine.progress import RunProgress
from genlab.engine.seeding import seed_everything
from genlab.engine.train import FINISHED, Metrics, RunResult, _finished, _rows, recorded
from genlab.errors import GenlabError, SpecError
from genlab.fed.graph_spec import graph_json
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

    run_id, gj = spec.run_id, graph_json(spec)
    try:
        _graphs(gj)  # graphs that cannot be drawn are bad input: before writing
    except ValueError as exc:
        raise SpecError(f"task {spec.task.name!r}: {exc}") from None
    seed_everything(spec.seed)
    task = spec.task.params
    model = GCN(task["dim"], task["classes"], spec.model.params["hidden"])
    n_threads = threads_mod.choose(sum(p.numel() for p in model.parameters()), threads)
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
            result = _rounds(spec, model, store, state, progress, on_eval)
    result.threads = n_threads
    return result


def _rounds(spec: RunSpec, model: Any, store: Store, state: dict | None, progress: bool,
            on_eval: Callable[[int, Metrics], None] | None) -> RunResult:  # fmt: skip
    from flwr.app import ArrayRecord, ConfigRecord

    from genlab.engine.optim import build_optimizer
    from genlab.fed.graph_apps import make_graph_client_app, make_graph_strategy
    from genlab.fed.grid import LocalGrid
    from genlab.fed.probes import flat_update, update_dissimilarity

    fed, run_id, meth = spec.fed, spec.run_id, spec.method.params
    assert fed is not None
    app = make_graph_client_app(
        graph_json(spec), fed.local_steps, weight=meth.get("weight", 1.0),
        min_nodes=meth.get("min_nodes", 5), hidden=spec.model.params["hidden"],
        optimizer=lambda m: build_optimizer(m, spec.optimizer),
    )  # fmt: skip
    grid = LocalGrid(app, list(range(fed.clients)))
    strategy = make_graph_strategy(spec.method.name, spec.seed, meth.get("per_class", 20),
                                   fed.fraction_train)  # fmt: skip

    def evaluate(rnd: int) -> Metrics:
        msgs = strategy.configure_evaluate(rnd, ArrayRecord(model.state_dict()), ConfigRecord(),
                                           grid)  # fmt: skip
        got = strategy.aggregate_evaluate(rnd, grid.send_and_receive(msgs)) or {}
        return {("global/own", "accuracy"): float(got["global_test"]),
                ("global/unseen", "accuracy"): float(got["global_unseen"])}  # fmt: skip

    start, wall0, resumed_from = 0, 0.0, None
    if state is not None:
        model.load_state_dict(state["model"])
        start, wall0, resumed_from = state["round"], state["wall_s"], state["round"]
        if getattr(strategy, "synthetic", None) is None and state.get("synthetic"):
            strategy.synthetic = state["synthetic"]  # type: ignore[attr-defined]
        store.drop_metrics_after(run_id, start)
        last: Metrics = {}
    else:
        store.drop_metrics_after(run_id, -1)
        last = evaluate(0)
        store.log_metrics(run_id, _rows(0, last))
    t0 = time.perf_counter()
    rnd, status, error = start, "done", None
    title = f"{spec.task.name} · {spec.method.name} · {fed.clients} clients (rounds)"
    with RunProgress(title, spec.steps, start, progress) as bar:
        for rnd in range(start + 1, spec.steps + 1):
            random.seed(spec.seed * 100_003 + rnd)  # Flower samples clients with `random`
            global_sd = {k: v.detach().clone() for k, v in model.state_dict().items()}
            msgs = strategy.configure_train(rnd, ArrayRecord(global_sd), ConfigRecord(), grid)
            replies = list(grid.send_and_receive(msgs))
            arrays, agg = strategy.aggregate_train(rnd, replies)
            if arrays is None or agg is None:
                raise GenlabError(f"round {rnd}: no client replied with a model")
            loss = float(agg["train_loss"])
            if not math.isfinite(loss):
                status, error = "diverged", f"non-finite client loss {loss} in round {rnd}"
                break
            model.load_state_dict(arrays.to_torch_state_dict())
            last = _client_metrics(replies, grid.nodes)
            last[("local/own", "accuracy")] = float(agg["local_test"])
            last[("local/unseen", "accuracy")] = float(agg["local_unseen"])
            last.update(evaluate(rnd))
            last[("fed", "train_loss")] = loss
            last[("fed", "update_dissimilarity")] = update_dissimilarity(
                [flat_update(m.content["arrays"].to_torch_state_dict(), global_sd) for m in replies]
            )  # fmt: skip
            store.log_metrics(run_id, _rows(rnd, last))
            bar.show({k: v for k, v in last.items() if not k[0].startswith("client/")})
            bar.advance(rnd)
            wall = wall0 + time.perf_counter() - t0
            if rnd < spec.steps:
                checkpoint.save(store.run_dir(run_id) / checkpoint.RESUME, {
                    "model": model.state_dict(), "round": rnd, "wall_s": wall,
                    "synthetic": getattr(strategy, "synthetic", None),
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


def _client_metrics(replies: list, nodes: dict[int, int]) -> Metrics:
    """``client/i:local_unseen`` per replying client and their worst, ``fed:local_unseen_worst``."""
    acc = {nodes[m.metadata.src_node_id]: float(m.content["metrics"]["local_unseen"])
           for m in replies if not m.has_error()}  # fmt: skip
    out: Metrics = {(f"client/{i}", "local_unseen"): a for i, a in sorted(acc.items())}
    if acc:
        out[("fed", "local_unseen_worst")] = min(acc.values())
    return out
