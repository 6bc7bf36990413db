"""The life cycle and round loop shared by genlab's federated runners (``fed.runner`` for task
runs, ``fed.graph_runner`` for per-client graphs).

``with_lease`` holds the run's lease, returns a finished run at once, loads the resume checkpoint
and records the run's end (the engine's ``recorded``). ``flower_rounds`` drives Flower's
strategy: each round samples clients (seeded by round, so a resumed run repeats the same draws),
aggregates their arrays, stores the round's metrics (the runner's ``measure`` plus
``fed:train_loss`` and ``fed:update_dissimilarity``), and checkpoints the global model and the
strategy attribute ``keep`` (FedImpro's feature statistics, FedLoG's synthetic nodes).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from typing import Any

from torch import nn

from genlab.engine import checkpoint
from genlab.engine import threads as threads_mod
from genlab.engine.lease import hold
from genlab.engine.progress import RunProgress
from genlab.engine.train import FINISHED, Metrics, RunResult, finished_result, metric_rows, recorded
from genlab.errors import GenlabError
from genlab.spec import RunSpec
from genlab.store import Store

Measure = Callable[[int, list, Any], Metrics]  # (round, client replies, aggregated metrics)


def with_lease(
    spec: RunSpec,
    store: Store,
    model: nn.Module,
    wait: bool,
    restart: bool,
    threads: int | None,
    rounds: Callable[[dict | None], RunResult],
) -> RunResult:
    """Run ``rounds(resume_state)`` under the run's lease and thread policy, or return the stored
    result of a run that already finished (unless ``restart``)."""
    run_id = spec.run_id
    n_threads = threads_mod.choose(sum(p.numel() for p in model.parameters()), threads)
    with threads_mod.using(n_threads), hold(store, run_id, wait=wait):
        status = store.status(run_id)
        if not restart and status in FINISHED:
            return finished_result(store, run_id)
        path = store.run_dir(run_id) / checkpoint.RESUME
        if restart:
            checkpoint.discard(path)
        state = checkpoint.load(path) if status and not restart else None
        store.begin(run_id, spec.canonical_json())
        with recorded(store, run_id, "round"):
            result = rounds(state)
    result.threads = n_threads
    return result


def flower_rounds(
    spec: RunSpec,
    store: Store,
    model: nn.Module,
    strategy: Any,
    grid: Any,
    state: dict | None,
    measure: Measure,
    keep: str,
    progress: bool,
    on_eval: Callable[[int, Metrics], None] | None,
) -> RunResult:
    """``spec.steps`` rounds of ``strategy`` over ``grid`` from ``state`` (a resume checkpoint or
    ``None``); ``measure(0, [], {})`` gives the metrics before the first round."""
    from flwr.app import ArrayRecord, ConfigRecord

    from genlab.fed.probes import flat_update, update_dissimilarity

    fed, run_id = spec.fed, spec.run_id
    assert fed is not None
    start, wall0, resumed_from = 0, 0.0, None
    last: Metrics = {}
    if state is not None:
        model.load_state_dict(state["model"])
        start, wall0, resumed_from = state["round"], state["wall_s"], state["round"]
        if state.get(keep):
            setattr(strategy, keep, state[keep])
        store.drop_metrics_after(run_id, start)
    else:
        store.drop_metrics_after(run_id, -1)
        last = measure(0, [], {})
        store.log_metrics(run_id, metric_rows(0, last))
    t0 = time.perf_counter()
    rnd, status, error = start, "done", None
    title = f"{spec.task.name} · {spec.method.name} · {fed.clients} clients (rounds)"
    with RunProgress(title, spec.steps, start, progress) as bar:
        for rnd in range(start + 1, spec.steps + 1):
            random.seed(spec.seed * 100_003 + rnd)  # Flower samples clients with `random`
            global_sd = {k: v.detach().clone() for k, v in model.state_dict().items()}
            msgs = strategy.configure_train(rnd, ArrayRecord(global_sd), ConfigRecord(), grid)
            replies = list(grid.send_and_receive(msgs))
            updates = [
                flat_update(m.content["arrays"].to_torch_state_dict(), global_sd) for m in replies
            ]
            arrays, agg = strategy.aggregate_train(rnd, replies)
            if arrays is None or agg is None:
                raise GenlabError(f"round {rnd}: no client replied with a model")
            loss = float(agg["train_loss"])
            if not math.isfinite(loss):
                status, error = "diverged", f"non-finite client loss {loss} in round {rnd}"
                break
            model.load_state_dict(arrays.to_torch_state_dict())
            last = measure(rnd, replies, agg)
            last[("fed", "update_dissimilarity")] = update_dissimilarity(updates)
            last[("fed", "train_loss")] = loss
            store.log_metrics(run_id, metric_rows(rnd, last))
            bar.show({k: v for k, v in last.items() if not k[0].startswith("client/")})
            bar.advance(rnd)
            wall = wall0 + time.perf_counter() - t0
            if rnd < spec.steps:
                checkpoint.save(
                    store.run_dir(run_id) / checkpoint.RESUME,
                    {
                        "model": model.state_dict(),
                        "round": rnd,
                        "wall_s": wall,
                        keep: getattr(strategy, keep, None),
                    },
                )
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
