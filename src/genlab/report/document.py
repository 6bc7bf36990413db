"""A report as a list of blocks (headings, text, tables, figures) rendered to md, html or latex.

Markdown and LaTeX write figures as PNG files beside the report; HTML embeds them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from genlab.report import html as H
from genlab.report.tables import Format, _latex_escape, render_table


@dataclass
class Report:
    """Blocks in order: ``("h", text)``, ``("p", text)``, ``("table", (df, caption))``,
    ``("fig", (name, png_bytes, caption))``."""

    title: str
    blocks: list[tuple[str, object]] = field(default_factory=list)

    def h(self, text: str) -> None:
        self.blocks.append(("h", text))

    def p(self, text: str) -> None:
        self.blocks.append(("p", text))

    def table(self, df: pd.DataFrame, caption: str = "") -> None:
        self.blocks.append(("table", (df, caption)))

    def fig(self, name: str, png: bytes, caption: str = "") -> None:
        self.blocks.append(("fig", (name, png, caption)))

    def render(
        self, fmt: Format, figures_dir: Path | None = None, relative_to: Path | None = None
    ) -> str:
        """The report as text; md/latex write figures into ``figures_dir`` (skipped if None) and
        link them relative to ``relative_to`` (the report's folder) when given; html embeds them
        (the template ``report/templates/document.html``)."""
        if fmt == "html":
            return H.document(self.title, [_html_block(kind, val) for kind, val in self.blocks])
        out: list[str] = []
        if fmt == "md":
            out.append(f"# {self.title}\n\n")
        elif fmt == "latex":
            out.append(f"\\section*{{{_latex_escape(self.title)}}}\n\n")
        for kind, val in self.blocks:
            if kind == "h":
                out.append(
                    {
                        "md": f"## {val}\n\n",
                        "latex": f"\\subsection*{{{_latex_escape(str(val))}}}\n\n",
                    }[fmt]
                )
            elif kind == "p":
                out.append({"md": f"{val}\n\n", "latex": f"{_latex_escape(str(val))}\n\n"}[fmt])
            elif kind == "table":
                df, caption = val  # type: ignore[misc]
                out.append(render_table(df, fmt, caption) + "\n")
            elif kind == "fig":
                name, png, caption = val  # type: ignore[misc]
                if figures_dir is None:
                    continue
                figures_dir.mkdir(parents=True, exist_ok=True)
                path = figures_dir / f"{name}.png"
                path.write_bytes(png)
                if relative_to is not None:
                    path = Path(os.path.relpath(path, relative_to))
                if fmt == "md":
                    out.append(f"![{caption}]({path.as_posix()})\n\n")
                else:
                    out.append(
                        "\\begin{figure}[ht]\\centering\n"
                        f"\\includegraphics[width=\\linewidth]{{{path.as_posix()}}}\n"
                        f"\\caption{{{_latex_escape(caption)}}}\\end{{figure}}\n\n"
                    )
        return "".join(out)


def _html_block(kind: str, val: object) -> dict[str, object]:
    """A report block as the HTML template takes it."""
    if kind == "table":
        df, caption = val  # type: ignore[misc]
        return {"kind": "table", "html": render_table(df, "html", caption)}
    if kind == "fig":
        _name, png, caption = val  # type: ignore[misc]
        return {"kind": "fig", "src": H.data_uri(png), "caption": caption}
    return {"kind": kind, "text": str(val)}
