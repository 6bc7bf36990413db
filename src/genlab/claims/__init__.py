"""Claims: falsifiable statements from the seed papers, each with specs, a predicate and a verdict.

Each module of this package registers ``Claim`` instances in ``CLAIMS`` (one module per family).
"""

from genlab.claims.base import Claim, ClaimResult, Verdict
from genlab.registry import Registry

CLAIMS: Registry = Registry("claim", package="genlab.claims")


def register(claim: Claim) -> Claim:
    """Register a claim instance under its id."""
    CLAIMS.register(claim.id, type(claim).Config, papers=claim.papers, family=claim.family)(claim)
    return claim


__all__ = ["CLAIMS", "Claim", "ClaimResult", "Verdict", "register"]
