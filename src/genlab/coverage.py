"""The catalogue's coverage over every registry: which tasks, models, methods, probes and claims
cite each seed paper (``genlab papers``, ``genlab list``).

Floor: the top, with the CLI: it imports the registries of every floor, the claims' included, and
hands them to the catalogue (``genlab.papers``), which is data and imports none.
"""

from __future__ import annotations

from genlab.papers import Paper
from genlab.papers import catalogue as _catalogue
from genlab.registry import Registry


def registries() -> dict[str, Registry]:
    """Every registry whose entries may cite papers, by kind."""
    from genlab.claims import CLAIMS
    from genlab.methods import METHODS
    from genlab.models import MODELS
    from genlab.probes import PROBES
    from genlab.tasks import TASKS

    return {"task": TASKS, "model": MODELS, "method": METHODS, "probe": PROBES, "claim": CLAIMS}


def catalogue() -> dict[int, Paper]:
    """All papers by number, each with the registered components and claims that cite it."""
    return _catalogue(registries())
