"""One self-contained HTML report: inline CSS, tables, and figures embedded as base64 PNG, from the
template ``report/templates/document.html`` (Jinja2, autoescaped)."""

from __future__ import annotations

import base64
from typing import Any

from genlab.report.templating import render


def data_uri(png: bytes) -> str:
    """A PNG as a ``data:`` URI, for an ``<img src>`` that needs no file beside the page."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def document(title: str, blocks: list[dict[str, Any]]) -> str:
    """A complete HTML page of ``blocks``: ``{"kind": "h" | "p", "text"}``, ``{"kind": "table",
    "html"}`` (``Markup`` from ``render_table``) or ``{"kind": "fig", "src", "caption"}``."""
    return render("report/document.html", title=title, blocks=blocks)
