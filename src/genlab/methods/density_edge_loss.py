"""The edge loss of scene graph generation, averaged over a graph's edges or normalised by its
density (Knyazev et al., "Graph density-aware losses for novel compositions in scene graph
generation", BMVC 2020, #94).

For a task with a label per edge (``sequence`` kind: ``0`` background, ``> 0`` a predicate, ``-100``
not an edge), each graph ``g`` of the batch gets per-edge cross-entropies ``l_e`` weighted by
``normalize``:

- ``edges`` (the standard loss): ``1 / M_g`` on every edge, ``M_g`` the graph's scored edges: each
  foreground edge of a large sparse graph weighs ``1/M_g``, little;
- ``foreground`` (the paper's hyperparameter-free ``dnorm``): ``1 / M_FG,g`` on every edge,
  ``M_FG,g`` its foreground edges, so a graph's weight no longer falls with its density;
- ``fgbg`` (``dnorm-fgbg``): ``1 / M_FG,g`` on foreground and ``1 / M_BG,g`` on background edges.

A graph without foreground edges falls back to ``1 / M_g``. The loss is the mean over the batch's
graphs of their weighted sums. Differences from the official code (bknyaz/sgg, ``main.py``): it
normalises over a whole batch of images (one weight per batch) and adds the object loss; here
every graph is normalised alone (their batch of one image) and objects are given (PredCls).
"""

from __future__ import annotations

from typing import Any, Literal

import torch
import torch.nn.functional as F
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.losses import IGNORE
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.registry import Params


class DensityLossParams(Params):
    """Params of ``density_edge_loss``."""

    normalize: Literal["edges", "foreground", "fgbg"] = Field(
        "foreground",
        description="edges: the standard per-graph mean; foreground: divide by the "
        "graph's foreground edges (dnorm); fgbg: foreground and background terms apart",
    )


def edge_weights(y: Tensor, normalize: str) -> Tensor:
    """Per-edge weights ``(B, T)`` of ``normalize`` for labels ``y`` (0 at unscored positions)."""
    scored = y != IGNORE
    fg = scored & (y > 0)
    bg = scored & (y == 0)
    m = scored.sum(1, keepdim=True).clamp(min=1).to(torch.float32)
    m_fg = fg.sum(1, keepdim=True).to(torch.float32)
    m_bg = bg.sum(1, keepdim=True).clamp(min=1).to(torch.float32)
    w = scored / m
    if normalize == "foreground":
        w = torch.where(m_fg > 0, scored / m_fg.clamp(min=1), w)
    elif normalize == "fgbg":
        w = torch.where(m_fg > 0, fg / m_fg.clamp(min=1) + bg / m_bg, w)
    return w


@METHODS.register("density_edge_loss", DensityLossParams, papers=(94,), family="graphs")
class DensityEdgeLoss(Method):
    """Per-graph edge cross-entropy, averaged over edges or density-normalised (#94)."""

    def __init__(self, params: DensityLossParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        if info.kind != "sequence":
            raise ValueError(
                "method 'density_edge_loss' needs a label per edge (a sequence "
                f"task such as relation_graphs), got a {info.kind} task"
            )

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x = torch.cat([b[0] for b in batches.values()])
        y = torch.cat([b[1] for b in batches.values()])
        logits = model(x)
        per_edge = F.cross_entropy(logits.transpose(1, 2), y, ignore_index=IGNORE, reduction="none")
        w = edge_weights(y, self.params.normalize).to(per_edge.dtype)
        return (per_edge * w).sum(1).mean(), {}
