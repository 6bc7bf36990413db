"""Claims: falsifiable statements from the seed papers, each a small declarative study (``base``).

One claim per module, grouped by family in sub-packages (``claims/grokking/``, ``claims/length/``,
...); each module registers its ``Claim`` instance in ``CLAIMS``.

Floor: above sweeps, derived components, the report's figure types and everything below them;
below the API and the CLI (nothing else imports it).
"""

from genlab.claims.base import Claim, ClaimResult, Verdict
from genlab.registry import Registry

CLAIMS: Registry = Registry("claim", package="genlab.claims")


def register(claim: Claim) -> Claim:
    """Register a claim instance under its id, after checking that it declares what every claim
    must (papers, statement, measures, fit and floor guards, a negative control)."""
    claim.check_declared()
    CLAIMS.register(claim.id, type(claim).Config, papers=claim.rows, family=claim.family)(claim)
    return claim


__all__ = ["CLAIMS", "Claim", "ClaimResult", "Verdict", "register"]
