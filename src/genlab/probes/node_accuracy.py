"""Per-node accuracy of a node-labelling task, and its class-balanced form: the measures of
Battaglia et al.'s shortest-path demo (#109), whose models label every node of a graph.

For a task with a label per position (``sequence`` kind; ``-100`` marks padding), per split:
``node_accuracy``, the share of scored nodes labelled right (the demo's "fraction of nodes
correctly labeled"), and ``balanced_accuracy``, the mean over the classes present of the share of
that class's nodes labelled right (chance 0.5 for two classes at any graph size, where the share
of nodes on a path falls as graphs grow). The default ``accuracy`` probe gives the demo's other
number, the share of graphs solved (every node right).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from genlab.errors import SpecError
from genlab.losses import IGNORE
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import NoParams


def node_scores(logits: Tensor, y: Tensor) -> tuple[float, float]:
    """``(node accuracy, balanced accuracy)`` over the scored positions of ``y``."""
    scored = y != IGNORE
    pred, true = logits.argmax(-1)[scored], y[scored]
    if not len(true):
        return float("nan"), float("nan")
    right = pred == true
    recalls = [right[true == c].float().mean() for c in torch.unique(true)]
    return right.float().mean().item(), torch.stack(recalls).mean().item()


@PROBES.register("node_accuracy", papers=(109,), family="graphs")
def node_accuracy(model: nn.Module, ctx: EvalContext, params: NoParams) -> ProbeResult:
    """Share of nodes labelled right, and its class-balanced form, per split (#109)."""
    if ctx.data.info.kind != "sequence":
        raise SpecError(
            "probe 'node_accuracy' needs a label per node (a sequence task, e.g. "
            f"graph_shortest_path), got a {ctx.data.info.kind} task"
        )
    out: ProbeResult = {}
    for name, split in ctx.splits.items():
        acc, bal = node_scores(ctx.logits(name), split.y)
        out[(name, "node_accuracy")] = acc
        out[(name, "balanced_accuracy")] = bal
    return out
