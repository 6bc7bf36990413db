"""The evaluation context shared by probes: the data, the step, and cached logits per split."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn

from genlab.data import TaskData

ProbeResult = dict[tuple[str, str], float]
EVAL_CHUNK = 8192


@dataclass
class EvalContext:
    """What a probe may look at. ``logits`` runs the model once per split, in large chunks.
    ``spec`` is the run's ``RunSpec`` when the engine evaluates (None elsewhere)."""

    model: nn.Module
    data: TaskData
    step: int
    spec: Any = None
    _cache: dict[str, Tensor] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.splits = {k: s for k, s in self.data.splits().items() if len(s)}

    def logits(self, split: str) -> Tensor:
        if split not in self._cache:
            x = self.splits[split].x
            was_training = self.model.training
            self.model.eval()
            with torch.inference_mode():
                out = [self.model(x[i : i + EVAL_CHUNK]) for i in range(0, len(x), EVAL_CHUNK)]
            self.model.train(was_training)
            self._cache[split] = torch.cat(out)
        return self._cache[split]
