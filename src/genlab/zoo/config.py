"""The zoo: models that differ in a few hyperparameters, each trained as one ``RunSpec``.

The base is an MLP on scikit-learn digits (``tasks/digits.py``); the hyperparameters that may vary
are those of the issue: width, depth, learning rate, batch size, weight decay, dropout and label
noise. ``size`` models are drawn without replacement from the grid of ``vary`` (all of it when
the grid is smaller), by ``seed``, and expand through ``genlab.design.Design`` like every other
set of runs; every model is evaluated at initialisation and at the end.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from pydantic import Field, model_validator

from genlab.design import Design
from genlab.registry import Params
from genlab.spec import RunSpec

HYPERPARAMS: dict[str, tuple[Any, ...]] = {
    "width": (32, 128, 512),
    "depth": (1, 2, 3),
    "lr": (3e-4, 1e-3, 3e-3),
    "batch_size": (32, 128, 512),
    "weight_decay": (0.0, 1e-3, 1e-1),
    "dropout": (0.0, 0.25, 0.5),
    "label_noise": (0.0, 0.1, 0.3),
}
FIXED: dict[str, Any] = {
    "width": 128,
    "depth": 2,
    "lr": 1e-3,
    "batch_size": 128,
    "weight_decay": 0.0,
    "dropout": 0.0,
    "label_noise": 0.0,
}
DEFAULT_PROBES = ("gwa", "coherence", "sharpness", "margins", "weight_norm")


class ZooConfig(Params):
    """What the zoo varies, its size, how long each model trains, and which probes it judges."""

    size: int = Field(24, ge=1, description="models in the zoo")
    vary: dict[str, list[Any]] = Field(
        default_factory=lambda: {k: list(v) for k, v in HYPERPARAMS.items()},
        description=f"hyperparameter -> values; allowed keys: {', '.join(HYPERPARAMS)}",
    )
    probes: list[str] = Field(default_factory=lambda: list(DEFAULT_PROBES), min_length=1)
    probe_params: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="probe name -> params (defaults otherwise)"
    )
    steps: int = Field(1000, ge=1, description="optimiser steps per model")
    train_size: int = Field(500, ge=10, le=1700, description="digits training examples")
    seed: int = Field(0, ge=0, description="draws the zoo from the grid; also each run's seed")

    @model_validator(mode="after")
    def _check(self) -> ZooConfig:
        unknown = sorted(set(self.vary) - set(HYPERPARAMS))
        if unknown:
            raise ValueError(
                f"vary: unknown hyperparameter(s) {', '.join(unknown)}; allowed: "
                f"{', '.join(HYPERPARAMS)}"
            )
        empty = [k for k, v in self.vary.items() if not v]
        if empty or not self.vary:
            raise ValueError(f"vary: each hyperparameter needs >= 1 value (empty: {empty})")
        from genlab.probes import PROBES

        bad = [p for p in self.probes if p not in PROBES]
        if bad:
            raise ValueError(
                f"probes: unknown probe(s) {', '.join(bad)}; allowed: {', '.join(PROBES.names())}"
            )
        if self.size < len(self.vary):
            raise ValueError(
                f"size: a zoo of {self.size} model(s) cannot vary {len(self.vary)} "
                f"hyperparameters; use size >= {len(self.vary)} or vary fewer"
            )
        return self


# where each hyperparameter lives in a spec (``genlab.design`` override paths)
PATHS = {
    "width": "model.params.width",
    "depth": "model.params.depth",
    "lr": "optimizer.lr",
    "batch_size": "batch_size",
    "weight_decay": "optimizer.weight_decay",
    "dropout": "model.params.dropout",
    "label_noise": "task.params.label_noise",
}


def grid(cfg: ZooConfig) -> list[dict[str, Any]]:
    """``size`` hyperparameter settings drawn without replacement from the grid of ``vary``."""
    keys = list(cfg.vary)
    every = [dict(zip(keys, vals, strict=True)) for vals in itertools.product(*cfg.vary.values())]
    if len(every) > cfg.size:
        every = random.Random(cfg.seed).sample(every, cfg.size)
    return [{**FIXED, **h} for h in every]


def base_spec(cfg: ZooConfig) -> dict[str, Any]:
    """The zoo's base run (an MLP on digits, AdamW, evaluated at the start and the end) before
    the hyperparameters of a model are set."""
    probes = [{"name": "accuracy"}, {"name": "loss"}]
    probes += [
        {"name": p, "params": cfg.probe_params.get(p, {})}
        for p in cfg.probes
        if p not in ("accuracy", "loss")
    ]
    return {
        "task": {"name": "digits", "params": {"train_size": cfg.train_size}},
        "model": {"name": "mlp", "params": {}},
        "optimizer": {"name": "adamw"},
        "steps": cfg.steps,
        "eval": {"every": cfg.steps, "log_points": 0, "probes": probes},
        "checkpoint_every": max(cfg.steps, 1),
    }


def zoo_design(cfg: ZooConfig) -> Design:
    """The zoo as a labelled ``Design``: one row per drawn setting (labels: the varied
    hyperparameters), every row run with seed ``cfg.seed`` (a batch as large as the training
    set is full batch)."""
    rows = []
    for h in grid(cfg):
        over = {PATHS[k]: v for k, v in h.items()}
        if h["batch_size"] is None or h["batch_size"] >= cfg.train_size:
            over["batch_size"] = None
        rows.append(({k: h[k] for k in cfg.vary}, over))
    return Design(base_spec(cfg), rows=rows, seeds=[cfg.seed])


def zoo_specs(cfg: ZooConfig) -> list[tuple[dict[str, Any], RunSpec]]:
    """Every model of the zoo: its varied hyperparameters and its spec (all validated up front;
    a bad value or probe: ``SpecError``, exit code 2)."""
    return [({k: a.labels[k] for k in cfg.vary}, a.spec) for a in zoo_design(cfg).expand()]
