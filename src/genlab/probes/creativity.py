"""Utility, novelty and creativity of sampled walks on a concept graph (Schapiro et al., #10).

For each prompt ``(start, end, label)`` of ``test/prompts`` (``tasks/concept_walks.py``) the model
samples a walk at each temperature. Utility ``U`` in [0, 1]: the share of steps that are edges of
the graph with their label, times the share of the three constraints met (starts at ``start``,
ends at ``end``, uses ``label``); a malformed output scores 0. Novelty ``N`` in [0, 1]: one minus
the largest Jaccard overlap between the walk's edges and those of a training walk from the same
start. Creativity is the mean of ``U * N`` (the paper's ``E[U N]``). Reported under the split
``test/prompts`` as ``utility_t<T>``, ``novelty_t<T>``, ``creativity_t<T>``.
"""

from __future__ import annotations

import torch
from pydantic import Field
from torch import nn

from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.probes.exact_match import decode
from genlab.registry import Params


class CreativityParams(Params):
    """Params of ``creativity``."""

    temperatures: list[float] = Field(default_factory=lambda: [0.5, 1.0, 1.5], min_length=1)
    n_prompts: int = Field(300, ge=1)


def edge_set(walk: tuple[int, ...]) -> frozenset:
    return frozenset((walk[i], walk[i + 1], walk[i + 2]) for i in range(0, len(walk) - 2, 2))


class Scorer:
    """Scores walks (token tuples, EOS cut off) against the graph and the training walks."""

    def __init__(self, extra: dict) -> None:
        self.node0, self.label0, self.n = extra["node0"], extra["label0"], extra["n_nodes"]
        self.edges = {
            (self.node0 + u, self.label0 + lab, self.node0 + v)
            for u, out in extra["edges"].items()
            for v, lab in out
        }
        self.by_start: dict[int, list[frozenset]] = {}
        for w in extra["train_walks"]:
            self.by_start.setdefault(w[0], []).append(edge_set(tuple(w)))

    def is_node(self, t: int) -> bool:
        return self.node0 <= t < self.node0 + self.n

    def utility(self, walk: tuple[int, ...], prompt: tuple[int, int, int]) -> float:
        ok = len(walk) >= 3 and len(walk) % 2 == 1
        ok = ok and all(self.is_node(t) for t in walk[::2])
        ok = ok and all(not self.is_node(t) and t >= self.label0 for t in walk[1::2])
        if not ok:
            return 0.0
        steps = [tuple(walk[i : i + 3]) for i in range(0, len(walk) - 2, 2)]
        valid = sum(s in self.edges for s in steps) / len(steps)
        met = (walk[0] == prompt[0]) + (walk[-1] == prompt[1]) + (prompt[2] in walk[1::2])
        return valid * met / 3

    def novelty(self, walk: tuple[int, ...]) -> float:
        mine = edge_set(walk)
        if not mine:
            return 0.0
        overlaps = [len(mine & e) / len(mine | e) for e in self.by_start.get(walk[0], [])]
        return 1.0 - max(overlaps, default=0.0)


@PROBES.register("creativity", CreativityParams, papers=(10,), family="compositional")
def creativity(model: nn.Module, ctx: EvalContext, params: CreativityParams) -> ProbeResult:
    """Mean utility, novelty and utility x novelty of sampled walks, per temperature (#10)."""
    info = ctx.data.info
    if "edges" not in info.extra or "prompts" not in ctx.data.test:
        raise SpecError("creativity needs the concept_walks task (a graph and test/prompts)")
    split = ctx.data.test["prompts"]
    s, eos = int(info.extra["src_len"]), int(info.extra["eos"])
    scorer = Scorer(info.extra)
    x = split.x[: params.n_prompts]
    prompts = [tuple(r) for r in x[:, :s].tolist()]
    gen = torch.Generator().manual_seed(ctx.step)
    was_training = model.training
    model.eval()
    out: ProbeResult = {}
    for temp in params.temperatures:
        walks = []
        for row in decode(model, x, info, temp, gen).tolist():
            walks.append(tuple(row[: row.index(eos)] if eos in row else row))
        u = torch.tensor([scorer.utility(w, p) for w, p in zip(walks, prompts, strict=True)])
        n = torch.tensor([scorer.novelty(w) for w in walks])
        out[("test/prompts", f"utility_t{temp:g}")] = u.mean().item()
        out[("test/prompts", f"novelty_t{temp:g}")] = n.mean().item()
        out[("test/prompts", f"creativity_t{temp:g}")] = (u * n).mean().item()
    model.train(was_training)
    return out
