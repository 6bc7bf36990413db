"""The genlab ``ServerApp``: the run's strategy for ``spec.steps`` rounds, for Flower's own engines.

``genlab run`` drives rounds itself (``genlab.fed.runner``) to store each round and checkpoint it;
this app is the same strategy and ClientApp packaged the way Flower runs them elsewhere: under
``flwr.simulation.run_simulation`` (Ray) or a deployment (``flwr run``), with the global model's
accuracy on the task's splits as the strategy's ``evaluate_fn``. Partition ids are the clients.
"""

from __future__ import annotations

from collections.abc import Callable

from flwr.app import ArrayRecord, ConfigRecord, Context, MetricRecord
from flwr.serverapp import Grid, ServerApp

from genlab.engine.train import evaluate, prepare
from genlab.fed.strategies import make_strategy
from genlab.spec import RunSpec


def make_server_app(
    spec_json: str, on_round: Callable[[int, dict[str, float]], None] | None = None
) -> ServerApp:
    """The ``ServerApp`` of the run whose canonical spec is ``spec_json``; ``on_round`` gets the
    global model's metrics (``split:metric``) after each round (round 0: before training)."""
    app = ServerApp()

    @app.main()
    def main(grid: Grid, context: Context) -> None:
        spec = RunSpec.model_validate_json(spec_json)
        prep = prepare(spec)
        strategy = make_strategy(spec)

        def central(rnd: int, arrays: ArrayRecord) -> MetricRecord:
            prep.model.load_state_dict(arrays.to_torch_state_dict())
            metrics = {f"{s}:{m}": v for (s, m), v in evaluate(prep, rnd).items()}
            if on_round is not None:
                on_round(rnd, metrics)
            return MetricRecord(metrics)

        strategy.start(
            grid=grid,
            initial_arrays=ArrayRecord(prep.model.state_dict()),
            num_rounds=spec.steps,
            train_config=ConfigRecord(),
            evaluate_fn=central,
        )

    return app
