"""Loss and accuracy on logits of either task kind (one label, or a label per position).

Sequence targets mark positions with nothing to predict as ``IGNORE`` (-100).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

IGNORE = -100


def _flat(logits: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    if logits.dim() == 3:
        return logits.reshape(-1, logits.shape[-1]), y.reshape(-1)
    return logits, y


def cross_entropy(logits: Tensor, y: Tensor, reduction: str = "mean") -> Tensor:
    """Softmax cross-entropy; computed in float64 when the logits are float64."""
    logits, y = _flat(logits, y)
    return F.cross_entropy(logits, y, ignore_index=IGNORE, reduction=reduction)


def correct(logits: Tensor, y: Tensor) -> Tensor:
    """Per-example correctness: for sequences, every scored position must be right."""
    if logits.dim() == 3:
        ok = (logits.argmax(-1) == y) | (y == IGNORE)
        return ok.all(dim=1)
    return logits.argmax(-1) == y


def accuracy(logits: Tensor, y: Tensor) -> float:
    return correct(logits, y).to(torch.float32).mean().item()


def _stablemax_s(x: Tensor) -> Tensor:
    """``s(x) = x + 1`` for ``x >= 0`` and ``1 / (1 - x)`` for ``x < 0`` (Prieto et al., #20)."""
    return torch.where(x >= 0, x + 1, 1 / (1 - torch.clamp(x, max=0)))


def log_stablemax(logits: Tensor, dim: int = -1) -> Tensor:
    """Log of StableMax, ``log(s(x_i) / sum_j s(x_j))``: softmax with ``exp`` replaced by ``s``.

    ``s`` grows linearly, not exponentially, so scaling the logits up cannot round the
    correct class's probability to exactly 1 (Prieto et al., "Grokking at the Edge of Numerical
    Stability", #20).
    """
    s = _stablemax_s(logits)
    return torch.log(s) - torch.log(s.sum(dim=dim, keepdim=True))


def stablemax_cross_entropy(logits: Tensor, y: Tensor, reduction: str = "mean") -> Tensor:
    """StableMax cross-entropy (Prieto et al., #20) on logits of either task kind, computed in
    float64 (as the authors' code does) and returned in the logits' dtype.

    Raises ``ValueError`` when ``y`` is not integer class labels (StableMax is for classification).
    """
    if y.is_floating_point():
        raise ValueError(
            "StableMax cross-entropy needs integer class labels (a classification task)"
        )
    logits, y = _flat(logits, y)
    # in float64, as Prieto et al.'s code computes it: the sum of s(x) over large logits
    logp = log_stablemax(logits.double())
    return F.nll_loss(logp, y, ignore_index=IGNORE, reduction=reduction).to(logits.dtype)
