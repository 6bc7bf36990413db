"""What the grokking claims share: the modular-arithmetic setup of ``presets/grokking.toml``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from genlab.registry import Params
from genlab.spec import load_spec_file
from genlab.tasks.modular import Operation

TRAIN, TEST = "train/main", "test/heldout"


class GrokkingConfig(Params):
    """Task, model size, optimiser, budget and seeds of a grokking run."""

    p: int = Field(97, ge=2)
    operation: Operation = "add"
    train_fraction: float = Field(0.5, gt=0, le=1)
    model: Literal["transformer", "mlp"] = "transformer"
    n_layers: int = Field(2, ge=1, description="transformer layers or MLP hidden layers")
    lr: float = Field(1e-3, gt=0)
    weight_decay: float = Field(1.0, ge=0)
    batch_size: int | None = Field(512, ge=1)
    steps: int = Field(6000, ge=1)
    seeds: int = Field(3, ge=3, description="at least 3, as the claim is stated over seeds")


def grokking_base(cfg: GrokkingConfig) -> dict[str, Any]:
    """The grokking preset as a spec dict on ``cfg``'s task, model, optimiser and budget."""
    base = load_spec_file("grokking")
    base["task"]["params"].update(
        p=cfg.p, operation=cfg.operation, train_fraction=cfg.train_fraction
    )
    layers = {"n_layers": cfg.n_layers} if cfg.model == "transformer" else {"depth": cfg.n_layers}
    base["model"] = {"name": cfg.model, "params": layers}
    base["optimizer"].update(lr=cfg.lr, weight_decay=cfg.weight_decay)
    base.update(steps=cfg.steps, batch_size=cfg.batch_size)
    return base
