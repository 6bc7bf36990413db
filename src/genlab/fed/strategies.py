"""Server strategies, as Flower ``Strategy`` objects: FedAvg, FedProx (Flower's own) and FedImpro.

``FedImproStrategy`` (Tang et al. 2024, "FedImpro: Measuring and Improving Client Update in
Federated Learning", #1) is Flower's FedAvg plus the shared feature distribution: it sums the
clients' class counts, feature sums and sums of squares (noised by the clients), and sends the
global class-conditional means, variances and class prior to the next round's clients, whose
heads then also train on features sampled from them (``genlab.methods.fed.FedImpro``). Its state
(the statistics) is checkpointed with the global model so a resumed run continues unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from flwr.app import ArrayRecord, ConfigRecord, Message, MetricRecord
from flwr.serverapp import Grid
from flwr.serverapp.strategy import FedAvg, FedProx, Strategy

from genlab.spec import RunSpec

VAR_FLOOR = 1e-4


class FedImproStrategy(FedAvg):
    """FedAvg that aggregates and redistributes class-conditional feature statistics."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.stats: dict[str, list[float]] | None = None

    def configure_train(
        self, server_round: int, arrays: ArrayRecord, config: ConfigRecord, grid: Grid
    ) -> Iterable[Message]:
        if self.stats is not None:
            for key, value in self.stats.items():
                config[f"stats-{key}"] = value
        return super().configure_train(server_round, arrays, config, grid)

    def aggregate_train(
        self, server_round: int, replies: Iterable[Message]
    ) -> tuple[ArrayRecord | None, MetricRecord | None]:
        replies = list(replies)
        ok = [m.content["feature-stats"] for m in replies if not m.has_error()]
        if ok:
            count = torch.tensor([r["count"] for r in ok], dtype=torch.float64).sum(0)
            n_classes = len(count)
            s = torch.tensor([r["sum"] for r in ok], dtype=torch.float64).sum(0).view(n_classes, -1)
            sq = torch.tensor([r["sumsq"] for r in ok], dtype=torch.float64).sum(0)
            sq = sq.view(n_classes, -1)
            seen = count > 0
            c = count.clamp_min(1)[:, None]
            mean = s / c
            var = (sq / c - mean**2).clamp_min(VAR_FLOOR)
            mean[~seen], var[~seen] = 0.0, 1.0
            self.stats = {
                "mean": mean.flatten().tolist(),
                "var": var.flatten().tolist(),
                "prior": (count / count.sum()).tolist(),
            }
        return super().aggregate_train(server_round, replies)


def make_strategy(spec: RunSpec) -> Strategy:
    """The Flower strategy named by the run's method (any other method trains under FedAvg)."""
    fed = spec.fed
    assert fed is not None
    common = {
        "fraction_train": fed.fraction_train,
        "fraction_evaluate": 1.0,
        "min_train_nodes": 1,
        "min_evaluate_nodes": 1,
        "min_available_nodes": 1,
    }
    if spec.method.name == "fedprox":
        return FedProx(proximal_mu=float(spec.method.params["mu"]), **common)
    if spec.method.name == "fedimpro":
        return FedImproStrategy(**common)
    return FedAvg(**common)
