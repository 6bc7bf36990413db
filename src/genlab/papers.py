"""The catalogue of the 120 seed papers, joined with the components and claims that cite them.

Rows come from ``papers_catalog.tsv`` (made from ``shared/papers/catalog.md`` by
``tools/catalog_to_tsv.py``); coverage is derived from the registries, never typed by hand.

Floor: the bottom (data). The catalogue imports no registry: coverage is computed over the
registries of the process that asks, where they are loaded (the report, the CLI), as
``genlab.registry.kinds`` lists them, or over those it passes.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources

from genlab.registry import Registry, kinds


@dataclass
class Paper:
    number: int
    name: str
    family: str
    tier: str
    cluster: str
    components: list[str] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)


ORDER = ("task", "model", "method", "probe", "claim")


def registries() -> dict[str, Registry]:
    """Every registry whose entries may cite papers, by kind: those this process has imported
    (``genlab.registry.kinds``), genlab's five first."""
    regs = kinds()
    return {k: regs[k] for k in (*ORDER, *sorted(set(regs) - set(ORDER))) if k in regs}


def catalogue(regs: Mapping[str, Registry] | None = None) -> dict[int, Paper]:
    """All papers by number, each with the components and claims of ``regs`` (default:
    ``registries()``) that cite it."""
    text = resources.files("genlab").joinpath("papers_catalog.tsv").read_text(encoding="utf-8")
    papers = {
        int(r["number"]): Paper(int(r["number"]), r["name"], r["family"], r["tier"], r["cluster"])
        for r in csv.DictReader(text.splitlines(), delimiter="\t")
    }
    for kind, reg in (registries() if regs is None else regs).items():
        for entry in reg.entries():
            for n in entry.papers:
                if n in papers:
                    target = papers[n].claims if kind == "claim" else papers[n].components
                    target.append(entry.name if kind == "claim" else f"{kind}:{entry.name}")
    return papers
