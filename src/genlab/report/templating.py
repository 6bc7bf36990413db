"""The Jinja2 environment every HTML page of genlab is rendered with: the HTML reports and tables
(``report/templates/``, names ``report/...``) and the static site (``report/site/templates/``,
beside its assets; names ``site/...``). Autoescape is on, so a value is HTML-escaped unless it is
``Markup`` (HTML made by another template); an undefined name is an error, not an empty string."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import cache
from typing import Any

import jinja2
from markupsafe import Markup

__all__ = ["Link", "Markup", "environment", "number", "render", "slug", "when"]


@dataclass(frozen=True)
class Link:
    """A value that links (a table cell, a list item): ``text`` shown, ``href`` as written."""

    text: str
    href: str


def when(ts: float | None) -> str:
    """A timestamp as ``2026-12-03 14:05`` (local time); ``—`` for none."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "—"


def number(v: Any) -> str:
    """A cell's text: floats to 4 significant digits, NaN and None as ``—``."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def slug(text: Any) -> str:
    """``not reproduced`` -> ``not-reproduced``: a CSS class, data attribute or file name (claim
    ids keep their dots, valid in file names)."""
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in str(text).lower())


@cache
def environment() -> jinja2.Environment:
    loader = jinja2.PrefixLoader(
        {
            "report": jinja2.PackageLoader("genlab", "report/templates"),
            "site": jinja2.PackageLoader("genlab", "report/site/templates"),
        }
    )
    env = jinja2.Environment(
        loader=loader,
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(when=when, number=number, slug=slug)
    env.tests["link"] = lambda v: isinstance(v, Link)
    env.tests["flat"] = lambda v: not any(isinstance(x, dict | list | tuple) for x in v)
    return env


def render(name: str, **context: Any) -> str:
    """Template ``name`` (``report/...`` or ``site/...``) rendered with ``context``."""
    return environment().get_template(name).render(**context)
