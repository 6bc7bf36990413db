"""Accuracy per test length, per sequence and per token, and its mean over out-of-range lengths.

The measure of length generalization in Delétang et al. (#62), Kazemnejad et al. (#100) and Zhou et
al. (#37, #42): for every split whose meta has a ``length``, the share of sequences with every
scored position right (``accuracy``) and the share of scored positions right (``token_accuracy``);
then their means over the splits longer than the training range (``info.extra["train_length"]``)
under the split ``test/out_of_range``, with the worst length as ``accuracy_min``. The validation
splits (``val/*``, the training lengths) get both numbers too, so that a claim can check an arm
fit its training distribution without the ``accuracy`` probe's pass over the training set.
"""

from __future__ import annotations

from torch import nn

from genlab.losses import IGNORE, correct
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import NoParams

OUT_OF_RANGE = "test/out_of_range"


def token_accuracy(logits, y) -> float:  # noqa: ANN001 - tensors
    """Share of scored positions predicted right (equals accuracy for one label per input)."""
    if logits.dim() == 2:
        return (logits.argmax(-1) == y).float().mean().item()
    scored = y != IGNORE
    right = (logits.argmax(-1) == y) & scored
    return (right.sum() / scored.sum().clamp(min=1)).item()


@PROBES.register("length_accuracy", papers=(62, 100, 37, 42))
def length_accuracy(model: nn.Module, ctx: EvalContext, params: NoParams) -> ProbeResult:
    """Per-length sequence and token accuracy, and their mean over lengths beyond training."""
    train_length = ctx.data.info.extra.get("train_length")
    out: ProbeResult = {}
    seq, tok = [], []
    for name, split in ctx.splits.items():
        length = split.meta.get("length")
        if name.startswith("val/"):
            logits = ctx.logits(name)
            out[(name, "accuracy")] = correct(logits, split.y).float().mean().item()
            out[(name, "token_accuracy")] = token_accuracy(logits, split.y)
        if length is None:
            continue
        logits = ctx.logits(name)
        acc = correct(logits, split.y).float().mean().item()
        tacc = token_accuracy(logits, split.y)
        out[(name, "accuracy")] = acc
        out[(name, "token_accuracy")] = tacc
        if train_length is None or length > train_length:
            seq.append(acc)
            tok.append(tacc)
    if seq:
        out[(OUT_OF_RANGE, "accuracy")] = sum(seq) / len(seq)
        out[(OUT_OF_RANGE, "token_accuracy")] = sum(tok) / len(tok)
        out[(OUT_OF_RANGE, "accuracy_min")] = min(seq)
    return out
