"""Grokking diagnostics: logit norm, softmax collapse, embedding quality, regression accuracy.

- ``logit_norm`` and ``softmax_collapse``: Prieto et al., "Grokking at the Edge of Numerical
  Stability" (#20): logits scale up after fitting until float32 softmax rounds the correct class's
  probability to exactly 1, and that sample's gradient vanishes.
- ``rep_quality``: how structured the residue embeddings of a modular-arithmetic model are
  (Liu et al., #107, measure representation quality; on modular tables the structured solution is
  a few Fourier modes, so we use the share of embedding power in the top Fourier frequencies).
- ``threshold_accuracy``: the thresholded accuracy of a regression model (Levi et al., #53), and
  ``linear_grokking_time``: the step at which Levi et al.'s theory predicts it crosses 50%.
"""

from __future__ import annotations

import math

import torch
from pydantic import Field
from torch import nn

from genlab.analysis.linear_theory import predicted_grokking_step
from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import NoParams, Params


def _classification_splits(ctx: EvalContext) -> dict:
    return {n: s for n, s in ctx.splits.items() if not s.y.is_floating_point()}


@PROBES.register("logit_norm", papers=(20,), family="grokking")
def logit_norm(model: nn.Module, ctx: EvalContext, params: NoParams) -> ProbeResult:
    """Mean L2 norm of the logit vector per split (Prieto et al., #20)."""
    out = {}
    for name in _classification_splits(ctx):
        logits = ctx.logits(name).double()
        out[(name, "logit_norm")] = logits.flatten(0, -2).norm(dim=-1).mean().item()
    return out


@PROBES.register("softmax_collapse", papers=(20,), family="grokking")
def softmax_collapse(model: nn.Module, ctx: EvalContext, params: NoParams) -> ProbeResult:
    """Share of samples whose float32 softmax gives the correct class probability exactly 1.

    For those samples the cross-entropy gradient ``p - onehot(y)`` is exactly zero on the correct
    class: softmax collapse (Prieto et al., #20). Classification splits only.
    """
    out = {}
    for name, split in _classification_splits(ctx).items():
        logits = ctx.logits(name)
        if logits.dim() == 3:
            continue
        p = torch.softmax(logits.float(), dim=-1)
        p_y = p.gather(1, split.y.view(-1, 1)).squeeze(1)
        out[(name, "softmax_collapse")] = (p_y == 1.0).float().mean().item()
    return out


class RepQualityParams(Params):
    """Params of ``rep_quality``."""

    top_k: int = Field(3, ge=1, description="how many Fourier frequencies count as structure")


def fourier_concentration(emb: torch.Tensor, top_k: int) -> float:
    """Share of the (row-centred) power of ``emb`` (``p x d``, row r = residue r) in its ``top_k``
    non-zero frequencies along the residue axis; about ``top_k / (p // 2)`` for no structure."""
    e = emb.double() - emb.double().mean(0, keepdim=True)
    power = torch.fft.rfft(e, dim=0).abs().pow(2).sum(1)[1:]
    if len(power) == 0 or power.sum() <= 0:
        return float("nan")
    return (power.sort(descending=True).values[:top_k].sum() / power.sum()).item()


@PROBES.register("rep_quality", RepQualityParams, papers=(107,), family="grokking")
def rep_quality(model: nn.Module, ctx: EvalContext, params: RepQualityParams) -> ProbeResult:
    """Structure of the residue embeddings: share of their power in the top Fourier frequencies.

    Reads ``model.embed`` (an ``nn.Embedding``); rows ``0..p-1`` are the residues of a modular task
    (``p = info.n_outputs``). Returns nothing for models without such an embedding.
    """
    embed = getattr(model, "embed", None)
    p = ctx.data.info.n_outputs
    if not isinstance(embed, nn.Embedding) or embed.num_embeddings < p:
        return {}
    with torch.no_grad():
        value = fourier_concentration(embed.weight[:p], params.top_k)
    return {("model", "rep_quality"): value}


class ThresholdParams(Params):
    """Params of ``threshold_accuracy``."""

    epsilon: float = Field(0.01, gt=0, description="a sample is right when |ŷ-y|²/d_out <= epsilon")


@PROBES.register("threshold_accuracy", ThresholdParams, papers=(53,), family="grokking")
def threshold_accuracy(model: nn.Module, ctx: EvalContext, params: ThresholdParams) -> ProbeResult:
    """Regression splits: ``mse`` (mean of |ŷ-y|²/d_out) and ``accuracy`` = share of samples with
    |ŷ-y|²/d_out <= epsilon, the thresholded accuracy of Levi et al. (#53)."""
    out = {}
    for name, split in ctx.splits.items():
        if not split.y.is_floating_point():
            continue
        pred = ctx.logits(name).double()
        err = (pred - split.y.double()).pow(2).mean(-1)
        out[(name, "mse")] = err.mean().item()
        out[(name, "accuracy")] = (err <= params.epsilon).double().mean().item()
    return out


@PROBES.register(
    "linear_grokking_time",
    ThresholdParams,
    papers=(53,),
    family="grokking",
    tiny_optimizer={"name": "sgd", "lr": 0.05},  # plain GD, stable at the tiny linear_teacher
)
def linear_grokking_time(
    model: nn.Module, ctx: EvalContext, params: ThresholdParams
) -> ProbeResult:
    """The predicted grokking step of a ``linear_student`` trained by plain GD on a
    ``linear_teacher`` (``genlab.analysis.linear_theory``; Levi et al., #53), as
    ``model/predicted_grokking_step``. The theory is for a noise-free teacher: with label noise
    the value is what it would be without. Nothing for other runs, or outside the theory's
    assumptions (N > d_in >= 50, stable GD, a reachable threshold)."""
    spec = ctx.spec
    if (
        spec is None
        or spec.task.name != "linear_teacher"
        or spec.model.name != "linear_student"
        or spec.optimizer.name != "sgd"
        or spec.optimizer.momentum
    ):
        return {}
    task, opt = spec.task.params, spec.optimizer
    try:
        t = predicted_grokking_step(
            task["d_in"],
            task["d_out"],
            task["sample_ratio"],
            opt.lr,
            opt.weight_decay,
            params.epsilon,
            spec.model.params.get("init_scale", 0.0),
        )
    except SpecError:
        return {}
    return {("model", "predicted_grokking_step"): float(t)}


def pathway_stats(routes: torch.Tensor) -> tuple[float, float]:
    """From expert choices ``(N, ...)`` per sample: the mean pairwise Hamming distance between
    pathways (share of routing decisions on which two samples differ) and the entropy of the
    distribution of whole pathways over ``log N`` (0: one shared pathway, 1: all distinct)."""
    codes = routes.reshape(len(routes), -1)
    n = len(codes)
    if n < 2:
        return float("nan"), float("nan")
    same = 0.0
    for j in range(codes.shape[1]):
        counts = torch.bincount(codes[:, j]).double()
        same += ((counts * counts).sum() - n).item() / (n * (n - 1))
    distance = 1 - same / codes.shape[1]
    _, counts = torch.unique(codes, dim=0, return_counts=True)
    prob = counts.double() / n
    entropy = float(-(prob * prob.log()).sum()) / math.log(n)
    return distance, entropy


@PROBES.register("pathways", papers=(38,), family="grokking")
def pathways(model: nn.Module, ctx: EvalContext, params: NoParams) -> ProbeResult:
    """Routing pathways of a mixture-of-experts model (``model.routes``) on each training split:
    ``pathway_distance`` (mean pairwise Hamming distance) and ``pathway_entropy`` (Li, Fan & Zhou,
    #38, measure pathway similarity and complexity; these are our small-scale proxies)."""
    if not hasattr(model, "routes"):
        return {}
    out = {}
    was_training = model.training
    model.eval()
    for name, split in ctx.splits.items():
        if not name.startswith("train/"):
            continue
        with torch.inference_mode():
            model(split.x)
            routes = model.routes
        distance, entropy = pathway_stats(routes)
        out[(name, "pathway_distance")] = distance
        out[(name, "pathway_entropy")] = entropy
    model.train(was_training)
    return out
