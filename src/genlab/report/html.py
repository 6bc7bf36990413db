"""One self-contained HTML file: inline CSS, tables, and figures embedded as base64 PNG."""

from __future__ import annotations

import base64
import html

CSS = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.3em 0.7em; text-align: left; }
th { background: #f4f4f4; } caption { text-align: left; font-style: italic; padding: 0.3em 0; }
img { max-width: 100%; } .reproduced { color: #1a7f37; } .not-reproduced { color: #c62828; }
.inconclusive { color: #b08800; }
"""


def img_tag(png: bytes, alt: str = "") -> str:
    """An ``<img>`` with the PNG inlined as a data URI."""
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">\n'


def document(title: str, body: list[str]) -> str:
    """A complete HTML page from body fragments (already HTML)."""
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head>\n"
        f"<body><h1>{html.escape(title)}</h1>\n" + "".join(body) + "</body></html>\n"
    )


def heading(text: str, level: int = 2) -> str:
    return f"<h{level}>{html.escape(text)}</h{level}>\n"


def paragraph(text: str) -> str:
    return f"<p>{html.escape(text)}</p>\n"
