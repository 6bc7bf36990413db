"""The site's HTML: the page frame, the index of papers and claims, one page per claim and per sweep.

Plain HTML with one stylesheet and one classic script (``assets/``), relative links only, so the
site works from ``file://`` and any static host. Every section and row has an ``id`` to link to.
"""

from __future__ import annotations

import html
import json
import time
from typing import Any

import pandas as pd

from genlab import __version__
from genlab.report.site.data import VERDICTS, SiteData, VerdictRecord, slug

e = html.escape
NOT_RUN, NO_CLAIM = "not run", "no claim"


def when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "—"


def badge(verdict: str, budget: str = "") -> str:
    tag = f' <span class="budget">{e(budget)}</span>' if budget else ""
    return f'<span class="badge v-{slug(verdict)}">{e(verdict)}{tag}</span>'


def page(title: str, body: str, root: str = "", footer: str = "") -> str:
    """A complete page; ``root`` is the relative path back to the site's top folder."""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(title)} · genlab</title>
<link rel="stylesheet" href="{root}assets/site.css"></head>
<body><header class="top"><a class="brand" href="{root}index.html">genlab</a>
<nav><a href="{root}index.html#papers">Papers</a><a href="{root}index.html#claims">Claims</a><a
href="{root}index.html#sweeps">Sweeps</a></nav></header>
<main>
{body}
</main>
<footer>{footer}</footer>
<script src="{root}assets/site.js"></script>
</body></html>
"""


def section(anchor: str, title: str, body: str, level: int = 2) -> str:
    return (f'<section id="{e(anchor)}"><h{level}><a class="anchor" href="#{e(anchor)}">'
            f"{e(title)}</a></h{level}>\n{body}</section>\n")  # fmt: skip


def value_html(v: Any) -> str:
    """Any JSON value, generically: lists as lists, objects as definition lists."""
    if isinstance(v, dict):
        return definition_list(v)
    if isinstance(v, list):
        if all(not isinstance(x, dict | list) for x in v):
            return e(", ".join(str(x) for x in v)) or "—"
        return "<ul>" + "".join(f"<li>{value_html(x)}</li>" for x in v) + "</ul>"
    if isinstance(v, float):
        return "—" if v != v else e(f"{v:.4g}")
    return e("—" if v is None else str(v))


def definition_list(d: dict[str, Any]) -> str:
    items = "".join(f"<dt>{e(str(k).replace('_', ' '))}</dt><dd>{value_html(v)}</dd>"
                    for k, v in d.items())  # fmt: skip
    return f'<dl class="meta">{items}</dl>'


def table(df: pd.DataFrame, caption: str = "", cls: str = "") -> str:
    """A scrollable table of ``df`` (cells: numbers to 4 significant digits)."""
    head = "".join(f"<th>{e(str(c))}</th>" for c in df.columns)
    rows = []
    for rec in df.itertuples(index=False):
        cells = "".join(f'<td data-label="{e(str(c))}">{value_html(v)}</td>'
                        for c, v in zip(df.columns, rec, strict=True))  # fmt: skip
        rows.append(f"<tr>{cells}</tr>")
    cap = f"<caption>{e(caption)}</caption>" if caption else ""
    return (f'<div class="scroll"><table class="{cls}">{cap}<thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>\n")  # fmt: skip


def controls(target: str, selects: dict[str, list[str]]) -> str:
    """Filter controls for ``table#target``: a text search and one select per data attribute."""
    parts = [f'<label>Search <input type="search" data-key="text" placeholder="name, id, '
             f'component…" aria-label="search {e(target)}"></label>']  # fmt: skip
    for key, options in selects.items():
        opts = "".join(f'<option value="{e(slug(o))}">{e(o)}</option>' for o in options)
        parts.append(f'<label>{e(key.title())} <select data-key="{e(key)}">'
                     f'<option value="">any</option>{opts}</select></label>')  # fmt: skip
    return (f'<div class="controls" data-for="{e(target)}">{"".join(parts)}'
            f'<span class="count" aria-live="polite"></span></div>\n')  # fmt: skip


def sortable(cols: list[str]) -> str:
    return "".join(f'<th><button type="button" class="sort">{e(c)}</button></th>' for c in cols)


# ---- index ----------------------------------------------------------------------------------


def _paper_row(p: Any, data: SiteData) -> str:
    verdicts, badges, links = [], [], []
    for cid in p.claims:
        rec = data.latest(cid)
        v = rec.verdict if rec else NOT_RUN
        verdicts.append(v)
        links.append(f'<a href="claims/{e(cid)}.html">{e(cid)}</a>')
        badges.append(f'<a href="claims/{e(cid)}.html">{badge(v, rec.budget if rec else "")}</a>')
    verdicts = verdicts or [NO_CLAIM]
    rank = min((VERDICTS + (NOT_RUN, NO_CLAIM)).index(v) for v in verdicts)
    chips = "".join(f'<span class="chip">{e(c)}</span>' for c in p.components)
    return (f'<tr id="paper-{p.number}" data-family="{e(slug(p.family))}" data-tier="{e(slug(p.tier))}"'
            f' data-verdict="{" ".join(slug(v) for v in verdicts)}"'
            f' data-covered="{"yes" if p.components or p.claims else "no"}">'
            f'<td data-label="#" data-sort="{p.number}"><a href="#paper-{p.number}">{p.number}</a></td>'
            f'<td data-label="Paper">{e(p.name)}</td><td data-label="Family">{e(p.family)}</td>'
            f'<td data-label="Tier">{e(p.tier)}</td><td data-label="Cluster">{e(p.cluster)}</td>'
            f'<td data-label="Components">{chips or "—"}</td>'
            f'<td data-label="Claims">{"<br>".join(links) or "—"}</td>'
            f'<td data-label="Verdict" data-sort="{rank}">{" ".join(badges) or badge(NO_CLAIM)}</td>'
            "</tr>")  # fmt: skip


def _claim_row(cid: str, row: dict[str, Any], data: SiteData) -> str:
    rec = data.latest(cid)
    v = rec.verdict if rec else NOT_RUN
    papers = ", ".join(f'<a href="#paper-{n}">#{n}</a>' for n in row.get("papers", [])
                       if isinstance(n, int))  # fmt: skip
    return (f'<tr id="claim-{e(cid)}" data-verdict="{slug(v)}" data-family="{e(slug(str(row.get("family", ""))))}">'
            f'<td data-label="Claim"><a href="claims/{e(cid)}.html">{e(cid)}</a></td>'
            f'<td data-label="Papers">{papers or "—"}</td>'
            f'<td data-label="Statement" class="statement">{e(str(row.get("statement", "")))}</td>'
            f'<td data-label="Verdict" data-sort="{(VERDICTS + (NOT_RUN,)).index(v)}">'
            f"{badge(v, rec.budget if rec else '')}</td>"
            f'<td data-label="When" data-sort="{rec.created if rec else 0}">'
            f"{when(rec.created if rec else None)}</td></tr>")  # fmt: skip


def index_page(data: SiteData, footer: str) -> str:
    papers = data.papers
    covered = sum(1 for p in papers if p.components or p.claims)
    counts: dict[str, int] = {}
    for cid in data.claims:
        rec = data.latest(cid)
        counts[rec.verdict if rec else NOT_RUN] = counts.get(rec.verdict if rec else NOT_RUN, 0) + 1
    summary = " ".join(f'<span class="stat">{badge(v)} {n}</span>' for v, n in sorted(counts.items(),
                       key=lambda kv: (VERDICTS + (NOT_RUN,)).index(kv[0])))  # fmt: skip
    intro = (f'<p class="lead">{len(papers)} seed papers, {covered} covered by a component or a '
             f"claim; {len(data.claims)} claims, each with its latest verdict (full budget where it "
             f"was run at full budget).</p><p class=\"summary\">{summary}</p>")  # fmt: skip
    families = sorted({p.family for p in papers})
    tiers = sorted({p.tier for p in papers})
    verdict_opts = [*VERDICTS, NOT_RUN, NO_CLAIM]
    paper_rows = "\n".join(_paper_row(p, data) for p in papers)
    papers_html = (controls("papers-table", {"family": families, "tier": tiers, "verdict": verdict_opts,
                                       "covered": ["yes", "no"]}) +
                   '<div class="scroll"><table id="papers-table" class="filterable cards"><thead><tr>'
                   + sortable(["#", "Paper", "Family", "Tier", "Cluster", "Components", "Claims",
                               "Verdict"]) + f"</tr></thead><tbody>\n{paper_rows}\n</tbody></table></div>")  # fmt: skip
    claim_rows = "\n".join(_claim_row(cid, row, data) for cid, row in sorted(data.claims.items()))
    claims_html = (controls("claims-table", {"verdict": [*VERDICTS, NOT_RUN]}) +
                   '<div class="scroll"><table id="claims-table" class="filterable cards"><thead><tr>'
                   + sortable(["Claim", "Papers", "Statement", "Verdict", "When"]) +
                   f"</tr></thead><tbody>\n{claim_rows}\n</tbody></table></div>")  # fmt: skip
    sweeps = data.sweeps
    if sweeps.empty:
        sweeps_html = "<p>No sweep in this store.</p>"
    else:
        items = "".join(f'<li id="sweep-{e(s.sweep_id)}"><a href="sweeps/{e(s.sweep_id)}.html">'
                        f"{e(s.name)}</a> <code>{e(s.sweep_id)}</code> · {s.n_runs} runs · "
                        f"{when(s.created)}</li>" for s in sweeps.itertuples())  # fmt: skip
        sweeps_html = f'<ul class="sweeps">{items}</ul>'
    body = ("<h1>Generalization claims, measured</h1>" + intro +
            section("papers", "Papers", papers_html) + section("claims", "Claims", claims_html) +
            section("sweeps", "Sweeps", sweeps_html))  # fmt: skip
    return page("papers and claims", body, "", footer)


# ---- claim pages ----------------------------------------------------------------------------


def _config_table(claim: Any, config: dict[str, Any]) -> str:
    fields = getattr(getattr(claim, "Config", None), "model_fields", {})
    df = pd.DataFrame([{"setting": k, "value": json.dumps(v) if isinstance(v, list | dict) else v,
                        "what it is": getattr(fields.get(k), "description", None) or ""}
                       for k, v in config.items()])  # fmt: skip
    return table(df, "the claim's configuration for this verdict", "kv") if len(df) else ""


def _provenance(rec: VerdictRecord) -> str:
    prov = dict(rec.extras.get("provenance") or {})
    runs = rec.runs
    facts: dict[str, Any] = {}
    if prov:
        commit = prov.get("git_commit")
        facts["genlab version"] = prov.get("genlab_version")
        facts["git commit"] = (commit + (" (with uncommitted changes)" if prov.get("git_dirty")
                                         else "")) if commit else "not in a git work tree"  # fmt: skip
        facts["torch version"] = prov.get("torch_version")
        facts["python"] = prov.get("python_version")
        facts["host"] = prov.get("host")
        facts["platform"] = prov.get("platform")
        facts["claim wall time"] = (f"{prov['wall_s']:.1f} s (training the runs the store did not "
                                    "hold yet, then judging)") if prov.get("wall_s") is not None else None  # fmt: skip
        facts["command line"] = " ".join(prov.get("argv") or []) or None
    else:
        facts["recorded"] = ("no provenance was recorded with this verdict (made before genlab "
                             "kept it); below, what the store's runs hold")  # fmt: skip
    if not runs.empty:
        facts["runs' wall time"] = f"{runs['wall_s'].sum():.1f} s in {len(runs)} runs"
        facts["runs' hosts"] = sorted(set(runs["host"].dropna()))
        facts["runs' genlab versions"] = sorted(set(runs["version"].dropna()))
    facts["run ids"] = rec.run_ids
    facts["verdict recorded"] = when(rec.created)
    return definition_list({k: v for k, v in facts.items() if v is not None})


def _runs_table(rec: VerdictRecord, final: pd.DataFrame) -> str:
    """Per run: id, status, step, wall time, the spec fields that vary, final accuracy per split."""
    from genlab.analysis.aggregate import run_labels

    runs = rec.runs
    if runs.empty:
        return "<p>None of this verdict's runs is in the store.</p>"
    labels, varying = run_labels(runs)
    df = runs[["run_id", "status", "step", "wall_s"]].merge(labels[["run_id", *varying]],
                                                           on="run_id")  # fmt: skip
    metric = "accuracy" if (final["metric"] == "accuracy").any() else "loss"
    f = final[(final["metric"] == metric) & final["run_id"].isin(rec.run_ids)]
    splits = sorted(f["split"].unique(), key=lambda s: (not s.startswith("train"), s))
    note = ""
    if len(splits) > 8:
        note, splits = f"; {len(splits) - 8} more splits in the store", splits[:8]
    wide = f[f["split"].isin(splits)].pivot(index="run_id", columns="split", values="value")
    df = df.merge(wide.add_prefix(f"{metric} "), left_on="run_id", right_index=True, how="left")
    df["wall_s"] = df["wall_s"].round(1)
    return table(df, f"the runs behind this verdict: final {metric} per split{note}", "runs")


def _verdict_section(rec: VerdictRecord, claim: Any, final: pd.DataFrame, figure: str | None,
                     latest: bool) -> str:  # fmt: skip
    anchor = f"verdict-{slug(rec.budget)}-{rec.config_id}"
    parts = [f'<p class="verdict-line">{badge(rec.verdict, rec.budget)} '
             f"<span class=\"muted\">config {e(rec.config_id)} · {when(rec.created)}</span></p>"]  # fmt: skip
    if rec.extras.get("scope"):
        ctl = ", ".join(f"{n}: {v or 'not run'}" for n, v in rec.extras.get("controls", {}).items())
        parts.append(f'<p class="muted">scope: {e(rec.extras["scope"])}'
                     f"{' · controls measured: ' + e(ctl) if ctl else ''}</p>")  # fmt: skip
    if rec.evidence:
        parts.append(f'<p class="evidence">{e(rec.evidence)}</p>')
    if rec.statistic:
        parts.append(table(pd.DataFrame({"statistic": list(rec.statistic),
                                         "value": list(rec.statistic.values())}),
                           "the numbers the verdict was decided on", "kv"))  # fmt: skip
    tbl = rec.extras.get("table") or {}
    if tbl.get("columns"):
        parts.append(table(pd.DataFrame(tbl["data"], columns=tbl["columns"]),
                           "evidence table (the claim's own)", "evidence"))  # fmt: skip
    if figure:
        parts.append(f'<figure><a href="../{e(figure)}"><img src="../{e(figure)}" '
                     f'alt="evidence figure of {e(rec.claim_id)}" loading="lazy"></a>'
                     f"<figcaption>evidence figure ({e(rec.budget)} budget)</figcaption></figure>")  # fmt: skip
    elif rec.figure:
        parts.append(
            '<p class="muted">The figure file of this verdict is missing from the store.</p>'
        )
    check = {True: "checked: today's code gives this verdict's configuration from it",
             False: "today's budget defaults no longer give this configuration; the settings "
                    "shown above are what ran", None: ""}[rec.command_checked]  # fmt: skip
    parts.append(f'<div class="command"><div class="label">Reproduce</div>'
                 f"<pre><code>{e(rec.command)}</code></pre>"
                 f'<p class="muted">{e(check)}</p></div>')  # fmt: skip
    parts.append(_config_table(claim, rec.config))
    parts.append(_runs_table(rec, final))
    parts.append("<h4>Provenance</h4>" + _provenance(rec))
    title = f"{'Latest verdict' if latest else 'Earlier verdict'}: {rec.budget} budget"
    return section(anchor, title, "\n".join(parts), level=3)


def claim_page(cid: str, row: dict[str, Any] | None, recs: list[VerdictRecord], claim: Any,
               papers: dict[int, Any], final: pd.DataFrame, figures: dict[str, str],
               footer: str) -> str:  # fmt: skip
    row = dict(row or {})
    statement = row.pop("statement", "") or getattr(claim, "statement", "")
    row.pop("id", None)
    nums = [n for n in (getattr(claim, "papers", None) or row.get("papers") or [])
            if isinstance(n, int)]  # fmt: skip
    plist = "".join(f'<li><a href="../index.html#paper-{n}">#{n}</a> '
                    f"{e(papers[n].name) if n in papers else ''} "
                    f'<span class="muted">{e(papers[n].family + " · " + papers[n].tier) if n in papers else ""}'
                    "</span></li>" for n in nums)  # fmt: skip
    head = (f"<h1>{e(cid)}</h1>" +
            (badge(recs[0].verdict, recs[0].budget) if recs else badge(NOT_RUN)) +
            f'<p class="lead statement">{e(statement)}</p>')  # fmt: skip
    body = head + section("papers", "Papers", f"<ul>{plist}</ul>" if plist else "<p>—</p>")
    if not row and claim is None:
        about = "<p>This claim is not registered in this genlab (a plugin not loaded?).</p>"
    else:
        about = definition_list(row)
    body += section("claim", "Predicate, guards and details", about)
    if not recs:
        body += section("verdicts", "Verdicts", "<p>Not run yet: "
                        f"<code>genlab claims run {e(cid)} --budget full</code></p>")  # fmt: skip
    else:
        toc = "".join(f'<li><a href="#verdict-{slug(r.budget)}-{r.config_id}">{badge(r.verdict, r.budget)}'
                      f" {when(r.created)}</a></li>" for r in recs)  # fmt: skip
        sections = "".join(_verdict_section(r, claim, final, figures.get(r.config_id), i == 0)
                           for i, r in enumerate(recs))  # fmt: skip
        body += section("verdicts", "Verdicts", f'<ul class="toc">{toc}</ul>' + sections)
    return page(cid, body, "../", footer)


def report_page(title: str, blocks: list[tuple[str, Any]], figures: dict[str, str], intro: str,
                footer: str) -> str:  # fmt: skip
    """A ``genlab.report`` Report (a sweep's) as a site page; figures already written as files."""
    from genlab.report.tables import render_table

    body = [f"<h1>{e(title)}</h1>", intro]
    n = 0
    for kind, val in blocks:
        if kind == "h":
            n += 1
            anchor = slug(str(val))[:60] or f"s{n}"
            body.append(
                f'<h2 id="{e(anchor)}"><a class="anchor" href="#{e(anchor)}">{e(str(val))}</a></h2>'
            )
        elif kind == "p":
            body.append(f"<p>{e(str(val))}</p>")
        elif kind == "table":
            df, caption = val
            body.append(f'<div class="scroll">{render_table(df, "html", caption)}</div>')
        elif kind == "fig":
            name, _png, caption = val
            body.append(f'<figure><img src="../{e(figures[name])}" alt="{e(caption)}">'
                        f"<figcaption>{e(caption)}</figcaption></figure>")  # fmt: skip
    return page(title, "\n".join(body), "../", footer)


def footer_html(store_root: str, commit: str | None) -> str:
    c = f" · commit <code>{e(commit[:12])}</code>" if commit else ""
    return (f"Built by genlab {e(__version__)} from the store <code>{e(store_root)}</code> on "
            f"{when(time.time())}{c}. Every number here is recomputed from that store.")  # fmt: skip
