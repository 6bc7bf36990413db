"""Per-iteration ("algorithmic") supervision of a looped model (Altabaa et al., "Unlocking
out-of-distribution generalization in transformers via recursive latent space reasoning",
catalogue #58): every variable is supervised at the loop that reaches its depth, and at the end.

From the authors' code (Awni00/algorithmic-generalization-transformer-architectures,
``experiments/model.py``, ``compute_batch_loss_nointerm``, their latent-state variant): loop ``d``
of the shared block is trained on the sequence in which every variable of graph depth ``<= d``
holds its value and every deeper one the token ``EMPTY``; the cross-entropies of the loops are
summed. Here the task gives each scored position's depth from the tokens
(``info.extra["position_depths"]``), the model reads its logits out after every loop
(``loop_logits``) and names the loop that ends depth ``d`` (``loop_of_depth``: with one loop per
operation plus one, loop ``d`` as theirs). The loss is the sum over depths ``d`` below the batch's
deepest of the cross-entropy at loop ``loop_of_depth(d)``, scored values of depth ``<= d`` their
values and, with ``pending``, deeper ones the task's blank token (``info.extra["blank"]``, their
``EMPTY``), plus the ordinary cross-entropy of the last loop on every value (their last loop).

Params: ``pending`` (default true, as theirs): train a value not yet reached to the blank token;
false leaves it out of that loop's loss.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.losses import IGNORE, cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.registry import Params


class PerLoopParams(Params):
    """Params of ``per_loop``."""

    pending: bool = Field(
        True, description="a value deeper than the loop's depth is trained to the blank token"
    )


@METHODS.register("per_loop", PerLoopParams, papers=(58,), family="length")
class PerLoop(Method):
    """Supervise each scored value at the loop that reaches its graph depth, and all at the end
    (Altabaa et al., #58). Needs a task that gives depths (``computation_graph``) and a model
    that reads out every loop (``looped_transformer``)."""

    def __init__(self, params: PerLoopParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        depths = info.extra.get("position_depths")
        if depths is None or "blank" not in info.extra:
            raise ValueError(
                "method per_loop needs a task that gives each scored position's depth "
                "(info.extra['position_depths'] and ['blank'], e.g. computation_graph)"
            )
        self.depths: Callable[[Tensor], Tensor] = depths
        self.blank = int(info.extra["blank"])

    def wrap(self, model: nn.Module) -> nn.Module:
        if not hasattr(model, "loop_logits") or not hasattr(model, "loop_of_depth"):
            raise ValueError(
                "method per_loop needs a model that reads out every loop "
                "(loop_logits, loop_of_depth; e.g. looped_transformer)"
            )
        return model

    def targets(self, y: Tensor, depths: Tensor, depth: int) -> Tensor:
        """Loop ``depth``'s targets: values of depth ``<= depth``; deeper scored ones the blank
        token (``pending``) or ``IGNORE``."""
        later = self.blank if self.params.pending else IGNORE
        return torch.where(depths > depth, torch.full_like(y, later), y)

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x = torch.cat([b[0] for b in batches.values()])
        y = torch.cat([b[1] for b in batches.values()])
        logits: list[Tensor] = model.loop_logits(x)
        depths = torch.where(y == IGNORE, -1, self.depths(x))
        end = cross_entropy(logits[-1], y)
        total = end
        for d in range(int(depths.max().item())):
            loop = min(model.loop_of_depth(d), len(logits) - 1)
            total = total + cross_entropy(logits[loop], self.targets(y, depths, d))
        return total, {"loss_end": end.item()}
