"""Checkpoints: written atomically, read back with ``weights_only=True`` (no pickled code)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

RESUME = "last.pt"
FINAL = "model.pt"


def save(path: Path, state: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def load(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    return torch.load(path, map_location="cpu", weights_only=True)
