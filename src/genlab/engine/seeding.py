"""The one place seeds go through, so that the same spec gives the same numbers."""

from __future__ import annotations

import random

import numpy as np
import torch


def seed_everything(seed: int) -> torch.Generator:
    """Seed Python, NumPy and torch's global RNG; return a fresh generator for batch order."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed + 1_000_003)
