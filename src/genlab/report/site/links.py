"""Every ``href`` and ``src`` of a built site, and those that leave it: what ``genlab site
--publish`` checks before it calls a folder ready for a static host (relative links only, each
resolving to a file inside the folder, each ``#anchor`` of a page present on it)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

EXTERNAL = re.compile(r"^([a-z][a-z0-9+.-]*:|//|/)", re.I)  # a scheme, a host or the host's root


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"] or "")
        for key in ("href", "src"):
            if a.get(key):
                self.refs.append(a[key] or "")


def page_refs(path: Path) -> tuple[list[str], set[str]]:
    """A page's links (``href`` and ``src`` values) and the ids it defines."""
    parser = _Refs()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.refs, parser.ids


def outside_links(out: Path) -> list[str]:
    """``page: link (why)`` for each link of an HTML page under ``out`` that is absolute, leaves
    ``out``, names no file, or names an anchor its page lacks."""
    root = out.resolve()
    pages = {p.resolve(): page_refs(p) for p in sorted(root.rglob("*.html"))}
    bad = []
    for page, (refs, _ids) in pages.items():
        where = page.relative_to(root)
        for ref in refs:
            if ref.startswith("data:"):
                continue
            if EXTERNAL.match(ref):
                bad.append(f"{where}: {ref} (not relative)")
                continue
            target, _, anchor = ref.partition("#")
            target = unquote(target.partition("?")[0])
            dest = (page.parent / target).resolve() if target else page
            if not dest.is_relative_to(root):
                bad.append(f"{where}: {ref} (outside the site)")
            elif not dest.is_file():
                bad.append(f"{where}: {ref} (no such file)")
            elif anchor and dest.suffix == ".html" and anchor not in pages[dest][1]:
                bad.append(f"{where}: {ref} (no such anchor)")
    return bad
