"""Models: each module registers builders ``build(params, info: TaskInfo) -> nn.Module``.

A model maps a batch of inputs to logits: ``(N, n_outputs)`` for classification tasks and
``(N, T, n_outputs)`` for sequence tasks.
"""

from genlab.registry import Registry

MODELS: Registry = Registry("model", package="genlab.models")

__all__ = ["MODELS"]
