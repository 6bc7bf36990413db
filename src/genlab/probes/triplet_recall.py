"""Triplet recall@K of scene graph generation, on all, zero-shot and few-shot compositions
(Knyazev et al., "Graph density-aware losses for novel compositions in scene graph generation",
BMVC 2020, #94; the zero-shot recall of Lu et al. 2016).

For a task whose inputs are candidate edges ``[subject class one-hot | object class one-hot | ...]``
with a label per edge (``info.extra["layout"] == "relation_pairs"``; ``0`` background, ``> 0`` a
predicate, ``-100`` not an edge), every (edge, predicate) of a graph is scored by the predicate's
softmax probability and the ``k`` best are kept (no graph constraint: an edge may keep several
predicates, the paper's "no graph constraint" recall). A ground-truth triplet is recalled when its
(edge, predicate) is kept. Per split of the ``roles``: ``recall`` over all ground-truth triplets,
``zero_shot_recall`` over those whose (subject class, predicate, object class) never occurs in
the training split, ``few_shot_recall`` over those occurring ``1..few_max`` times (NaN where there
are none).
"""

from __future__ import annotations

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import Params


class TripletRecallParams(Params):
    """Params of ``triplet_recall``."""

    k: int = Field(20, ge=1, description="(edge, predicate) pairs kept per graph")
    few_max: int = Field(5, ge=1, description="most training occurrences of a few-shot triplet")
    roles: list[str] = Field(
        default_factory=lambda: ["val", "test"], description="split roles to score"
    )


def triplets(x: Tensor, y: Tensor, classes: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Indices ``(graph, edge)`` of the foreground edges and their subject, predicate, object."""
    g, e = torch.nonzero(y > 0, as_tuple=True)
    rows = x[g, e]
    return (
        torch.stack([g, e]),
        rows[:, :classes].argmax(1),
        y[g, e],
        rows[:, classes : 2 * classes].argmax(1),
    )


def counts(x: Tensor, y: Tensor, classes: int, predicates: int) -> Tensor:
    """Training occurrences of every (subject, predicate, object) ``(C, R + 1, C)``."""
    _, s, p, o = triplets(x, y, classes)
    out = torch.zeros(classes, predicates + 1, classes, dtype=torch.long)
    out.index_put_((s, p, o), torch.ones_like(s), accumulate=True)
    return out


def recalled(logits: Tensor, y: Tensor, k: int, where: Tensor) -> Tensor:
    """Per foreground edge at ``where`` (``(2, F)``): whether its (edge, predicate) is among the
    graph's ``k`` best-scored (edge, predicate) pairs."""
    probs = logits.float().softmax(-1)[..., 1:]  # (B, T, R): foreground predicates only
    probs = probs.masked_fill((y < 0).unsqueeze(-1), -1.0)
    flat = probs.flatten(1)
    kth = flat.topk(min(k, flat.shape[1]), dim=1).values[:, -1]
    g, e = where
    return probs[g, e, y[g, e] - 1] >= kth[g]


@PROBES.register("triplet_recall", TripletRecallParams, papers=(94,), family="graphs")
def triplet_recall(model: nn.Module, ctx: EvalContext, params: TripletRecallParams) -> ProbeResult:
    """Recall@K on all, zero-shot and few-shot triplets per split (#94)."""
    info = ctx.data.info
    if info.extra.get("layout") != "relation_pairs":
        raise SpecError(
            "probe 'triplet_recall' needs candidate edges with their classes (a task "
            "whose info.extra layout is 'relation_pairs', e.g. relation_graphs)"
        )
    c, r = int(info.extra["classes"]), info.n_outputs - 1
    seen = sum(counts(s.x, s.y, c, r) for s in ctx.data.train.values())
    out: ProbeResult = {}
    for name, split in ctx.splits.items():
        if name.split("/")[0] not in params.roles:
            continue
        where, s, p, o = triplets(split.x, split.y, c)
        hit = recalled(ctx.logits(name), split.y, params.k, where).float()
        n = seen[s, p, o]
        nan = torch.tensor(float("nan"))
        for metric, keep in (
            ("recall", torch.ones_like(n, dtype=torch.bool)),
            ("zero_shot_recall", n == 0),
            ("few_shot_recall", (n >= 1) & (n <= params.few_max)),
        ):
            out[(name, metric)] = (hit[keep].mean() if keep.any() else nan).item()
    return out
