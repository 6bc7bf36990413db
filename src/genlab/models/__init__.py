"""Models: each module registers builders ``build(params, info: TaskInfo) -> nn.Module``.

A model maps a batch of inputs to logits: ``(N, n_outputs)`` for classification tasks and
``(N, T, n_outputs)`` for sequence tasks.

Floor: the first of the registries (models -> methods -> ensembles -> probes -> tasks): imports
the data floor only. Models built from finished runs are ``genlab.derived``'s.
"""

from genlab.registry import Registry

MODELS: Registry = Registry("model", package="genlab.models")

__all__ = ["MODELS"]
