"""scikit-learn's bundled 8x8 handwritten digits (1,797 images; no download), as tensors."""

from __future__ import annotations

from functools import lru_cache

import torch


@lru_cache(maxsize=1)
def _load() -> tuple[torch.Tensor, torch.Tensor]:
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0
    return x, torch.tensor(d.target, dtype=torch.long)


def load_digits_tensors() -> tuple[torch.Tensor, torch.Tensor]:
    """Images ``(1797, 1, 8, 8)`` in [0, 1] and labels ``(1797,)`` in 0..9 (copies, safe to edit)."""
    x, y = _load()
    return x.clone(), y.clone()
