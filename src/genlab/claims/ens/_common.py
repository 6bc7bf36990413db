"""What the ensemble claims share: run specs evaluated at the ends of training, from-run models."""

from __future__ import annotations

from typing import Any


def run(
    task: str,
    task_params: dict[str, Any],
    model: dict[str, Any],
    steps: int,
    lr: float,
    batch: int | None = 64,
    probes: list[Any] | None = None,
    method: str = "erm",
    evals: int = 0,
    **extra: Any,
) -> dict[str, Any]:
    """A spec dict evaluated at step 0, at the end and ``evals`` log-spaced steps between."""
    return {
        "task": {"name": task, "params": task_params},
        "model": model,
        "method": {"name": method, "params": extra.pop("method_params", {})},
        "optimizer": {"name": "adamw", "lr": lr, "weight_decay": extra.pop("weight_decay", 0.0)},
        "steps": steps,
        "batch_size": batch,
        "checkpoint_every": max(steps, 1),
        "eval": {
            "every": max(steps, 1),
            "log_points": evals,
            "probes": [
                p if isinstance(p, dict) else {"name": p} for p in probes or ["accuracy", "loss"]
            ],
        },
        **extra,
    }


def from_run(parent: str, **params: Any) -> dict[str, Any]:
    return {"name": "from_run", "params": {"run": parent, **params}}
