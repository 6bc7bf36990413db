"""Methods: how one optimisation step uses the per-environment batches (DomainBed's contract)."""

from genlab.methods.base import Batch, Method
from genlab.registry import Registry

METHODS: Registry = Registry("method", package="genlab.methods")

__all__ = ["METHODS", "Batch", "Method"]
