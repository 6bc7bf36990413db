"""Tables as Markdown, LaTeX (booktabs) or HTML, and the ``mean [lo, hi]`` format of an estimate
with its confidence interval."""

from __future__ import annotations

import math
from typing import Literal

import pandas as pd

Format = Literal["md", "html", "latex"]
FORMATS = ("md", "html", "latex")


def fmt_ci(mean: float, lo: float, hi: float, digits: int = 3) -> str:
    """``0.812 [0.790, 0.834]``; without an interval (one seed) just the mean; ``–`` for none."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "–"
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def _cell(v: object) -> str:
    if isinstance(v, float):
        return "–" if math.isnan(v) else f"{v:.4g}"
    return str(v)


def _latex_escape(s: str) -> str:
    for a, b in [
        ("\\", r"\textbackslash{}"),
        ("&", r"\&"),
        ("%", r"\%"),
        ("$", r"\$"),
        ("#", r"\#"),
        ("_", r"\_"),
        ("{", r"\{"),
        ("}", r"\}"),
        ("~", r"\~{}"),
        ("^", r"\^{}"),
    ]:
        s = s.replace(a, b)
    return s


def render_table(df: pd.DataFrame, fmt: Format, caption: str = "") -> str:
    """``df`` (cells already formatted or plain values) as a table in ``fmt``."""
    cols = [str(c) for c in df.columns]
    rows = [[_cell(v) for v in r] for r in df.itertuples(index=False)]
    if fmt == "md":
        lines = ([f"*{caption}*", ""] if caption else []) + [
            "| " + " | ".join(c.replace("|", "\\|") for c in cols) + " |",
            "|" + "|".join("---" for _ in cols) + "|",
        ]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        return "\n".join(lines) + "\n"
    if fmt == "latex":
        body = [r"\begin{table}[ht]", r"\centering"]
        if caption:
            body.append(rf"\caption{{{_latex_escape(caption)}}}")
        body += [
            rf"\begin{{tabular}}{{{'l' * len(cols)}}}",
            r"\toprule",
            " & ".join(_latex_escape(c) for c in cols) + r" \\",
            r"\midrule",
        ]
        body += [" & ".join(_latex_escape(c) for c in r) + r" \\" for r in rows]
        body += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return "\n".join(body) + "\n"
    if fmt == "html":
        from genlab.report.templating import Markup, render

        return Markup(render("report/table.html", columns=cols, rows=rows, caption=caption))
    raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")


def heldout_wide(
    long: pd.DataFrame, method: str = "method", setting: str = "setting"
) -> pd.DataFrame:
    """One task's ``genlab.analysis.aggregate.heldout_table`` as DomainBed prints it: one row per
    method; one ``mean [95% CI]`` column per held-out setting, then ``avg``, ``worst setting`` and
    ``worst``. Methods keep their order in ``long``."""
    methods = list(dict.fromkeys(long[method]))
    settings = list(dict.fromkeys(long.loc[long["kind"] == "setting", setting]))
    rows = []
    for m in methods:
        g = long[long[method] == m]
        cell = {
            k: fmt_ci(r["mean"], r["ci_lo"], r["ci_hi"])
            for k, r in (
                (r[setting] if r["kind"] == "setting" else r["kind"], r) for _, r in g.iterrows()
            )
        }
        worst = g[g["kind"] == "worst"]
        rows.append(
            {
                "method": m,
                **{s: cell.get(s, "–") for s in settings},
                "avg": cell.get("avg", "–"),
                "worst setting": worst[setting].iloc[0] if len(worst) else "–",
                "worst": cell.get("worst", "–"),
            }
        )
    return pd.DataFrame(rows, columns=["method", *settings, "avg", "worst setting", "worst"])
