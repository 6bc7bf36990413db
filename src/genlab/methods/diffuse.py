"""Distribution matching over a prompt's valid outcomes (catalogue #49, "Forcing diffuse
distributions out of language models", Zhang, Schwarzschild, Carlini, Kolter & Ippolito, COLM
2024).

The paper fine-tunes an LM so that its distribution over a set of valid target strings matches a
target distribution ``w`` (uniform, or e.g. population rates): the loss is ``-sum_y w_y log p(y |
prompt)`` over every valid target ``y`` (official code, ``y0mingzhang/diffuse-distributions``,
``src/search.py``: the sequence NLL of each target weighted by its target weight), which is
minimised when the model puts exactly ``w`` on the valid set. Here each outcome is one class, so
the loss is the cross-entropy between the target distribution and the model's softmax over all
classes (mass outside the valid set is penalised, as in the paper); the batch's labels ``y`` are
not read.

The valid outcomes of a prompt are the class ids it lists (a task that sets
``info.extra["listed_outcomes"]``, e.g. ``diffuse_picks``). ``target``: ``uniform`` over them
(the paper's default), or ``first``: ``bias`` on the first listed outcome and the rest uniform
(the pretraining corpus's own shape: a fine-tune toward it teaches no diffuseness).
"""

from __future__ import annotations

from typing import Any, Literal

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.registry import Params


class DiffuseParams(Params):
    """Params of ``diffuse``."""

    target: Literal["uniform", "first"] = Field(
        "uniform", description="target over the listed outcomes: uniform, or biased to the first"
    )
    bias: float = Field(0.6, ge=0, le=1, description="extra mass on the first (target='first')")


def listed(x: Tensor, n_outputs: int) -> Tensor:
    """``(n, n_outputs)`` bool: the outcome classes each prompt lists (tokens below
    ``n_outputs``)."""
    mask = torch.zeros(len(x), n_outputs, dtype=torch.bool, device=x.device)
    rows, cols = torch.nonzero(x < n_outputs, as_tuple=True)
    mask[rows, x[rows, cols]] = True
    return mask


def target_distribution(x: Tensor, n_outputs: int, target: str = "uniform", bias: float = 0.0):
    """``(n, n_outputs)`` target probabilities over each prompt's listed outcomes: uniform, or
    ``bias`` extra on the first listed outcome (``target='first'``)."""
    mask = listed(x, n_outputs).to(torch.float32)
    t = mask / mask.sum(1, keepdim=True).clamp_min(1.0)
    if target == "first":
        is_outcome = x < n_outputs
        first = x[torch.arange(len(x), device=x.device), is_outcome.int().argmax(1)]
        t = (1.0 - bias) * t
        t[torch.arange(len(x), device=x.device), first] += bias
    return t


@METHODS.register("diffuse", DiffuseParams, papers=(49,), family="comp", tiny={})
class Diffuse(Method):
    """Cross-entropy from a target distribution over each prompt's listed outcomes to the
    model's softmax (#49). Params: ``target`` (``uniform`` | ``first``), ``bias``."""

    def __init__(self, params: DiffuseParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        if info.kind != "classification" or not info.extra.get("listed_outcomes"):
            raise ValueError(
                "method diffuse needs a classification task whose prompts list their valid "
                "outcomes (info.extra['listed_outcomes'], e.g. task diffuse_picks)"
            )

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x = torch.cat([b[0] for b in batches.values()])
        p = self.params
        t = target_distribution(x, self.info.n_outputs, p.target, p.bias)
        logp = torch.log_softmax(model(x), dim=-1)
        return -(t * logp).sum(1).mean(), {}
