"""What the grokking claims share: the modular-arithmetic setups (the ``grokking`` preset's
transformer, and the embedding-MLP of Liu et al. #107 / Varma et al. #116) as spec dicts."""

from __future__ import annotations

from collections.abc import Sequence
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


class MLPConfig(Params):
    """Modular arithmetic with an embedding-MLP, full-batch AdamW (Liu et al. #107, Varma et al.
    #116): the knobs the MLP claims share."""

    p: int = Field(23, ge=5, le=200)
    operation: Operation = "add"
    width: int = Field(128, ge=1)
    embed_dim: int = Field(16, ge=1)
    lr: float = Field(1e-2, gt=0)
    weight_decay: float = Field(1.0, ge=0)
    steps: int = Field(3000, ge=1)
    seeds: int = Field(3, ge=1)


def mlp_base(
    cfg: MLPConfig, train_fraction: float, probes: Sequence[str] = ("accuracy",), evals: int = 50
) -> dict[str, Any]:
    """A full-batch embedding-MLP run on ``cfg``'s table at ``train_fraction``."""
    return {
        "task": {
            "name": "modular_arithmetic",
            "params": {"p": cfg.p, "operation": cfg.operation, "train_fraction": train_fraction},
        },
        "model": {
            "name": "mlp",
            "params": {"width": cfg.width, "depth": 2, "embed_dim": cfg.embed_dim},
        },
        "optimizer": {"name": "adamw", "lr": cfg.lr, "weight_decay": cfg.weight_decay},
        "steps": cfg.steps,
        "checkpoint_every": 100_000,
        "eval": {
            "every": max(1, cfg.steps // evals),
            "log_points": 20,
            "probes": [{"name": n} for n in probes],
        },
    }
