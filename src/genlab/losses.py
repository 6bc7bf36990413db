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
