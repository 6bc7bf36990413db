"""The catalogue of the 120 seed papers, joined with the components and claims that cite them.

Rows come from ``papers_catalog.tsv`` (made from ``shared/papers/catalog.md`` by
``tools/catalog_to_tsv.py``); coverage is derived from the registries, never typed by hand.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from importlib import resources

from genlab.registry import Registry


@dataclass
class Paper:
    number: int
    name: str
    family: str
    tier: str
    cluster: str
    components: list[str] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)


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
    text = resources.files("genlab").joinpath("papers_catalog.tsv").read_text(encoding="utf-8")
    papers = {
        int(r["number"]): Paper(int(r["number"]), r["name"], r["family"], r["tier"], r["cluster"])
        for r in csv.DictReader(text.splitlines(), delimiter="\t")
    }
    for kind, reg in registries().items():
        for entry in reg.entries():
            for n in entry.papers:
                if n in papers:
                    target = papers[n].claims if kind == "claim" else papers[n].components
                    target.append(entry.name if kind == "claim" else f"{kind}:{entry.name}")
    return papers
