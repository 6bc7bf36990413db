"""Methods: how one optimisation step uses the per-environment batches (DomainBed's contract).

Floor: registries, above ``models`` (a method may build or wrap one); methods that read
finished runs (``unic``'s teachers) are ``genlab.derived``'s.
"""

from genlab.methods.base import Batch, Method
from genlab.registry import Registry

METHODS: Registry = Registry("method", package="genlab.methods")

__all__ = ["METHODS", "Batch", "Method"]
