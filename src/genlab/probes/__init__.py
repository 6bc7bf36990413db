"""Probes: measurements of a model at evaluation time, registered by name.

A probe is ``fn(model, ctx: EvalContext, params) -> {(split, metric): value}``; model-level
quantities use the split ``"model"``. ``ctx.logits(split)`` is computed once per evaluation and shared.

Floor: registries, above ``models``, ``methods`` and ``ensembles`` (a probe may rebuild a run's
initial model), below ``tasks``; probes that read finished runs are ``genlab.derived``'s.
"""

from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import Registry

PROBES: Registry = Registry("probe", package="genlab.probes")

__all__ = ["PROBES", "EvalContext", "ProbeResult"]
