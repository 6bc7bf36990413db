"""The ``fed`` table of a run spec: how a task's training data is split among Flower clients.

A run with a ``fed`` table is a federated run: ``steps`` counts server rounds, ``method`` names the
strategy (``fedavg``, ``fedprox``, ``fedimpro``; see ``genlab.fed.methods``), ``optimizer`` and
``batch_size`` are each client's local optimiser and batch.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class FedSpec(BaseModel):
    """Clients, their heterogeneity and the round protocol."""

    model_config = ConfigDict(extra="forbid")

    clients: int = Field(10, ge=2, description="clients that train")
    held_out: int = Field(0, ge=0, description="extra clients that never train, only evaluated")
    skew: Literal["label", "quantity", "feature", "iid"] = Field(
        "label", description="label: Dirichlet(alpha) labels; quantity: Dirichlet(alpha) sizes; "
        "feature: one training environment per client; iid"
    )  # fmt: skip
    alpha: float = Field(0.1, gt=0, description="Dirichlet concentration (label/quantity skew)")
    fraction_train: float = Field(1.0, gt=0, le=1, description="share of clients sampled a round")
    local_steps: int = Field(10, ge=1, description="local optimiser steps per round")
    local_test: float = Field(0.2, ge=0, lt=1, description="share of each client's data kept "
                              "for its per-client accuracy")  # fmt: skip

    @model_validator(mode="after")
    def _enough(self) -> FedSpec:
        if self.clients * self.fraction_train < 1:
            raise ValueError(f"fraction_train={self.fraction_train} samples no client")
        return self
