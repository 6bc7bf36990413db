"""What the site's templates are given: tables as rows of plain values and links, a claim's papers
as items, the footer. No HTML is written here; the templates (``templates/``) escape every value."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from genlab import __version__
from genlab.report.templating import Link

__all__ = ["Link", "Table", "footer", "paper_items", "table_of"]


@dataclass
class Table:
    """A table for the ``table`` macro: ``rows`` of cells (values, or ``Link``), one per column."""

    columns: list[str]
    rows: list[list[Any]]
    caption: str = ""
    cls: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def table_of(df: pd.DataFrame, caption: str = "", cls: str = "") -> Table:
    """``df`` as a ``Table`` (its cells as they are; the template formats numbers)."""
    rows = [list(r) for r in df.itertuples(index=False)]
    return Table([str(c) for c in df.columns], rows, caption, cls)


def paper_items(
    refs: list[dict[str, Any]], papers: dict[int, Any], index: str
) -> list[dict[str, Any]]:
    """Each paper of a claim for the ``paper`` macro: a catalogue row links to its row of the
    index (``index``: the index's path from the page, ``""`` on the index itself) with the
    catalogue's name; a paper outside the catalogue gives its authors and title, without a link."""
    items = []
    for ref in refs:
        n = ref["row"]
        title = ref["title"] and f"\u201c{ref['title']}\u201d"
        cited = ", ".join(filter(None, [ref["authors"], title]))
        if n is None:
            items.append({"kind": "outside", "text": cited})
        elif n in papers:
            items.append(
                {"kind": "row", "text": f"#{n} {papers[n].name}", "href": f"{index}#paper-{n}"}
            )
        else:
            items.append({"kind": "unknown", "text": f"#{n} {cited}"})
    return items


def footer(
    store_root: str, commit: str | None, recorded: str | None, publish: bool = False
) -> dict[str, Any]:
    """The footer's facts: the store (only its folder's name in a published site, which names no
    path of the machine it was built on), the commit, and whether recorded verdicts are shown."""
    from pathlib import Path

    return {
        "version": __version__,
        "store": Path(store_root).name if publish else store_root,
        "built": time.time(),
        "commit": (commit or "")[:12],
        "recorded": bool(recorded),
    }
