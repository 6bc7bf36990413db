"""``cl_accuracy``: accuracy per split, task-aware where the scenario says so.

In a task-incremental scenario (``cl_split`` with ``scenario="task"``) the experience of a test
example is known, so its logits are masked to that experience's classes before the argmax (the
multi-head evaluation of the Model Zoo paper, #120), and a model with ``task_logits(x, task)`` (a
zoo) predicts from the members that saw that experience; elsewhere it is plain accuracy. Stored as
``accuracy``, so that R[i, j] reads the same for both scenarios (Model Zoo #120, fast/slow weights
#95).
"""

from __future__ import annotations

import torch
from torch import nn

from genlab.losses import correct
from genlab.probes import PROBES
from genlab.probes.base import EVAL_CHUNK, EvalContext, ProbeResult
from genlab.probes.basic import require_class_labels
from genlab.registry import NoParams


def _task_logits(model: nn.Module, x: torch.Tensor, task: int) -> torch.Tensor:
    was = model.training
    model.eval()
    with torch.inference_mode():
        out = torch.cat(
            [model.task_logits(x[i : i + EVAL_CHUNK], task) for i in range(0, len(x), EVAL_CHUNK)]
        )
    model.train(was)
    return out


@PROBES.register("cl_accuracy", papers=(120, 95))
def cl_accuracy(model: nn.Module, ctx: EvalContext, params: NoParams) -> ProbeResult:
    """Share right per split; logits masked to the split's ``meta["classes"]`` when
    ``meta["mask"]`` is set (task-incremental), else as ``accuracy``."""
    require_class_labels(ctx, "cl_accuracy")
    out = {}
    for name, split in ctx.splits.items():
        logits = ctx.logits(name)
        if split.meta.get("mask") and hasattr(model, "task_logits"):
            logits = _task_logits(model, split.x, split.meta["experience"])
        if split.meta.get("mask"):
            keep = torch.zeros(logits.shape[-1], dtype=torch.bool)
            keep[split.meta["classes"]] = True
            logits = logits.masked_fill(~keep, torch.finfo(logits.dtype).min)
        out[(name, "accuracy")] = correct(logits, split.y).float().mean().item()
    return out
