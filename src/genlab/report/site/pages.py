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
from genlab.report.site.data import (
    BUDGETS,
    VERDICTS,
    SiteData,
    VerdictRecord,
    paper_refs,
    recorded_reason,
    shown_recorded,
    slug,
)

e = html.escape
NOT_RUN, NO_CLAIM = "not run", "no claim"
EARLIER = "declared"  # docs/verdicts.json's "rules" of a verdict from before controls were measured
RANKS = (*VERDICTS, NOT_RUN, NO_CLAIM)  # sort order of verdict cells


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


def controls(target: str, selects: dict[str, list[str]],
             labels: dict[str, str] | None = None) -> str:  # fmt: skip
    """Filter controls for ``table#target``: a text search and one select per data attribute
    (labelled by ``labels``, else by the attribute's name)."""
    parts = [f'<label>Search <input type="search" data-key="text" placeholder="name, id, '
             f'component…" aria-label="search {e(target)}"></label>']  # fmt: skip
    for key, options in selects.items():
        opts = "".join(f'<option value="{e(slug(o))}">{e(o)}</option>' for o in options)
        label = (labels or {}).get(key, key.title())
        parts.append(f'<label>{e(label)} <select data-key="{e(key)}">'
                     f'<option value="">any</option>{opts}</select></label>')  # fmt: skip
    return (f'<div class="controls" data-for="{e(target)}">{"".join(parts)}'
            f'<span class="count" aria-live="polite"></span></div>\n')  # fmt: skip


def sortable(cols: list[str]) -> str:
    return "".join(f'<th><button type="button" class="sort">{e(c)}</button></th>' for c in cols)


def paper_items(refs: list[dict[str, Any]], papers: dict[int, Any], index: str) -> list[str]:
    """Each paper as HTML: a catalogue row links to its row of the index (``index``: the index's
    path from the page, ``""`` on the index itself) with the catalogue's name; a paper outside the
    catalogue gives its authors and title, without a link."""
    items = []
    for ref in refs:
        n, cited = ref["row"], ", ".join(filter(None, [ref["authors"], ref["title"] and
                                                        f"\u201c{ref['title']}\u201d"]))  # fmt: skip
        if n is None:
            items.append(f'<span class="ref">{e(cited)} '
                         '<span class="muted">(not in the catalogue)</span></span>')  # fmt: skip
        elif n in papers:
            items.append(f'<a href="{index}#paper-{n}">#{n} {e(papers[n].name)}</a>')
        else:
            items.append(f"#{n} {e(cited)}")
    return items


def recorded_line(budget: str, rec: dict[str, Any]) -> str:
    """A recorded verdict's badge, with its date and, for one measured before controls were
    measured, "earlier rules"."""
    when_ = f' <span class="muted">{e(str(rec["measured"]))}</span>' if rec.get("measured") else ""
    old = ' <span class="muted">(earlier rules)</span>' if rec.get("rules") == EARLIER else ""
    return f"{badge(rec.get('verdict', NOT_RUN), budget)}{when_}{old}"


def short(text: str, n: int = 140) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rsplit(" ", 1)[0] + " \u2026"


def recorded_cell(budget: str, rec: dict[str, Any], scope: str) -> str:
    """The index's cell of a recorded verdict: badge, date, scope and, for an inconclusive, why
    and what would decide it (shortened; the claim page has them in full)."""
    notes = [f"scope: {rec.get('scope') or scope}"] if rec.get("scope") or scope else []
    if reason := recorded_reason(rec):
        notes.append(f"why: {short(reason)}")
    if rec.get("needs"):
        notes.append(f"needs: {short(str(rec['needs']))}")
    return recorded_line(budget, rec) + "".join(f'<br><span class="muted">{e(n)}</span>'
                                                for n in notes)  # fmt: skip


# ---- index ----------------------------------------------------------------------------------


def _paper_row(p: Any, data: SiteData) -> str:
    verdicts, badges, links, recorded, rec_badges = [], [], [], [], []
    for cid in p.claims:
        rec = data.latest(cid)
        v = rec.verdict if rec else NOT_RUN
        verdicts.append(v)
        links.append(f'<a href="claims/{e(cid)}.html">{e(cid)}</a>')
        badges.append(f'<a href="claims/{e(cid)}.html">{badge(v, rec.budget if rec else "")}</a>')
        found = data.recorded_verdict(cid)
        recorded.append(found[1]["verdict"] if found else NOT_RUN)
        rec_badges.append(f'<a href="claims/{e(cid)}.html#recorded">'
                          f"{badge(found[1]['verdict'], found[0]) if found else badge(NOT_RUN)}</a>")  # fmt: skip
    verdicts, recorded = verdicts or [NO_CLAIM], recorded or [NO_CLAIM]
    rank = min(RANKS.index(v) for v in verdicts)
    chips = "".join(f'<span class="chip">{e(c)}</span>' for c in p.components)
    rec_cell = (f'<td data-label="Recorded" data-sort="{min(RANKS.index(v) for v in recorded)}">'
                f'<span>{" ".join(rec_badges) or badge(NO_CLAIM)}</span></td>') if data.recorded else ""  # fmt: skip
    return (f'<tr id="paper-{p.number}" data-family="{e(slug(p.family))}" data-tier="{e(slug(p.tier))}"'
            f' data-verdict="{" ".join(slug(v) for v in verdicts)}"'
            f' data-recorded="{" ".join(slug(v) for v in recorded)}"'
            f' data-covered="{"yes" if p.components or p.claims else "no"}">'
            f'<td data-label="#" data-sort="{p.number}"><a href="#paper-{p.number}">{p.number}</a></td>'
            f'<td data-label="Paper">{e(p.name)}</td><td data-label="Family">{e(p.family)}</td>'
            f'<td data-label="Tier">{e(p.tier)}</td><td data-label="Cluster">{e(p.cluster)}</td>'
            f'<td data-label="Components">{chips or "—"}</td>'
            f'<td data-label="Claims">{"<br>".join(links) or "—"}</td>{rec_cell}'
            f'<td data-label="Measured here" data-sort="{rank}">{" ".join(badges) or badge(NO_CLAIM)}</td>'
            "</tr>")  # fmt: skip


def _claim_row(cid: str, row: dict[str, Any], data: SiteData, papers: dict[int, Any]) -> str:
    rec = data.latest(cid)
    v = rec.verdict if rec else NOT_RUN
    cited = "<br>".join(paper_items(paper_refs(row.get("papers")), papers, ""))
    found = data.recorded_verdict(cid)
    rv = found[1]["verdict"] if found else NOT_RUN
    rec_cell = (f'<td data-label="Recorded" data-sort="{RANKS.index(rv)}"><span>'
                f"{recorded_cell(*found, str(data.recorded[cid].get('scope') or '')) if found else badge(NOT_RUN)}"
                "</span></td>") if data.recorded else ""  # fmt: skip
    return (f'<tr id="claim-{e(cid)}" data-verdict="{slug(v)}" data-recorded="{slug(rv)}"'
            f' data-family="{e(slug(str(row.get("family", ""))))}">'
            f'<td data-label="Claim"><a href="claims/{e(cid)}.html">{e(cid)}</a></td>'
            f'<td data-label="Papers"><span>{cited or "—"}</span></td>'
            f'<td data-label="Statement" class="statement">{e(str(row.get("statement", "")))}</td>'
            f'{rec_cell}<td data-label="Measured here" data-sort="{RANKS.index(v)}">'
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
                       key=lambda kv: RANKS.index(kv[0])))  # fmt: skip
    has_rec = bool(data.recorded)
    recorded: dict[str, int] = {}
    for cid in data.claims:
        found = data.recorded_verdict(cid)
        v = found[1]["verdict"] if found else NOT_RUN
        recorded[v] = recorded.get(v, 0) + 1
    rec_summary = " ".join(f'<span class="stat">{badge(v)} {n}</span>' for v, n in sorted(
        recorded.items(), key=lambda kv: RANKS.index(kv[0])))  # fmt: skip
    intro = (f'<p class="lead">{len(papers)} seed papers, {covered} covered by a component or a '
             f"claim; {len(data.claims)} claims, each with "
             + ("its recorded verdict (<code>docs/verdicts.json</code>: full budget, else smoke) and "
                if has_rec else "") +
             "the latest verdict measured in this store (full budget where it was run at full "
             "budget).</p>" +
             (f'<p class="summary"><span class="muted">recorded:</span> {rec_summary}</p>'
              if has_rec else "") +
             f'<p class="summary"><span class="muted">measured here:</span> {summary}</p>')  # fmt: skip
    families = sorted({p.family for p in papers})
    tiers = sorted({p.tier for p in papers})
    verdict_opts = [*VERDICTS, NOT_RUN, NO_CLAIM]
    labels = {"verdict": "Measured here", "recorded": "Recorded"}
    rec_sel = {"recorded": verdict_opts} if has_rec else {}
    rec_col = ["Recorded"] if has_rec else []
    paper_rows = "\n".join(_paper_row(p, data) for p in papers)
    papers_html = (controls("papers-table", {"family": families, "tier": tiers, **rec_sel,
                                             "verdict": verdict_opts, "covered": ["yes", "no"]},
                            labels) +
                   '<div class="scroll"><table id="papers-table" class="filterable cards"><thead><tr>'
                   + sortable(["#", "Paper", "Family", "Tier", "Cluster", "Components", "Claims",
                               *rec_col, "Measured here"]) + f"</tr></thead><tbody>\n{paper_rows}\n</tbody></table></div>")  # fmt: skip
    catalogue = {p.number: p for p in papers}
    claim_rows = "\n".join(_claim_row(cid, row, data, catalogue)
                           for cid, row in sorted(data.claims.items()))  # fmt: skip
    claims_html = (controls("claims-table", {**({"recorded": [*VERDICTS, NOT_RUN]} if has_rec else {}),
                                             "verdict": [*VERDICTS, NOT_RUN]}, labels) +
                   '<div class="scroll"><table id="claims-table" class="filterable cards"><thead><tr>'
                   + sortable(["Claim", "Papers", "Statement", *rec_col, "Measured here", "When"]) +
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


def _paper_list(refs: list[dict[str, Any]], papers: dict[int, Any]) -> str:
    items = []
    for ref, item in zip(refs, paper_items(refs, papers, "../index.html"), strict=True):
        n = ref["row"]
        title = ref["title"] and f"\u201c{ref['title']}\u201d"
        about = [] if n is None else [ref["authors"], title]
        if n in papers:
            about += [papers[n].family, papers[n].tier]
        about = [a for a in about if a]
        muted = f' <span class="muted">{e(" · ".join(about))}</span>' if about else ""
        items.append(f"<li>{item}{muted}</li>")
    return f"<ul>{''.join(items)}</ul>" if items else "<p>—</p>"


def _recorded_budget(cid: str, budget: str, rec: dict[str, Any], recs: list[VerdictRecord]) -> str:
    """One budget's recorded verdict beside the newest one measured in this store at that budget."""
    v = rec.get("verdict", NOT_RUN)
    line = '<p class="verdict-line"><span class="muted">{}</span> {}</p>'
    parts = [line.format("recorded", recorded_line(budget, rec))]
    here = next((r for r in recs if r.budget == budget), None)
    if here:
        parts.append(line.format("measured here", f'<a href="#verdict-{slug(here.budget)}-'
                                 f'{here.config_id}">{badge(here.verdict, here.budget)}</a> '
                                 f'<span class="muted">{when(here.created)}</span>'))  # fmt: skip
    else:
        parts.append(line.format("measured here", f"{badge(NOT_RUN)} <code>genlab claims run "
                                 f"{e(cid)} --budget {e(budget)}</code>"))  # fmt: skip
    anchor, title = f"recorded-{slug(budget)}", f"{budget} budget"
    if v not in VERDICTS:
        parts.append("<p>No verdict was recorded at this budget.</p>")
        return section(anchor, title, "\n".join(parts), level=3)
    if rec.get("rules") == EARLIER:
        parts.append('<p class="muted">Measured under the earlier rules: licensed by the controls '
                     "the claim declared, not by their measured verdicts.</p>")  # fmt: skip
    if rec.get("evidence"):
        parts.append(f'<p class="evidence">{e(str(rec["evidence"]))}</p>')
    reason = recorded_reason(rec)
    if reason:
        parts.append(f"<p><strong>Inconclusive because</strong> {e(reason)}.</p>")
    if rec.get("needs"):
        parts.append(f"<p><strong>Needs:</strong> {e(str(rec['needs']))}</p>")
    ctl = rec.get("controls") or {}
    if ctl:
        items = "".join(f"<li>{e(n)}: {badge(m or NOT_RUN)}</li>" for n, m in ctl.items())
        parts.append(f'<p class="muted">controls, as measured:</p><ul class="toc">{items}</ul>')
    facts = {"measured": rec.get("measured"), "scope": rec.get("scope"),
             "the claim's decision": rec.get("decision") if rec.get("decision") not in (None, v) else None,
             "seeds": rec.get("seeds"),
             "wall time": f"{rec['wall_s']:.1f} s" if isinstance(rec.get("wall_s"), int | float) else None,
             "CPU time": f"{rec['cpu_s']:.1f} s" if isinstance(rec.get("cpu_s"), int | float) else None,
             "design hash": rec.get("design_hash"),
             "design frozen": {True: "yes", False: "no"}.get(rec.get("frozen")),
             "rules": "earlier (declared controls)" if rec.get("rules") == EARLIER else rec.get("rules")}  # fmt: skip
    parts.append(definition_list({k: x for k, x in facts.items() if x is not None}))
    return section(anchor, title, "\n".join(parts), level=3)


def _recorded_section(cid: str, entry: dict[str, Any], recs: list[VerdictRecord]) -> str:
    note = f" \u2014 {e(str(entry['scope_note']))}" if entry.get("scope_note") else ""
    intro = ('<p class="muted">As recorded in <code>docs/verdicts.json</code> (written by '
             "<code>tools/verdict_tables.py</code> from the stores they were measured in), beside "
             "the newest verdict measured in this store at each budget.</p>" +
             (f"<p>scope: <strong>{e(str(entry['scope']))}</strong>{note}</p>" if entry.get("scope") else ""))  # fmt: skip
    budgets = "".join(_recorded_budget(cid, b, entry[b] if isinstance(entry.get(b), dict) else {}, recs)
                      for b in BUDGETS)  # fmt: skip
    changes = entry.get("changes") or []
    if changes:
        budgets += section("recorded-changes", "Recorded design changes", value_html(changes),
                           level=3)  # fmt: skip
    return section("recorded", "Recorded verdicts", intro + budgets)


def claim_page(cid: str, row: dict[str, Any] | None, recs: list[VerdictRecord], claim: Any,
               papers: dict[int, Any], final: pd.DataFrame, figures: dict[str, str],
               footer: str, recorded: dict[str, Any] | None = None) -> str:  # fmt: skip
    """``recorded``: the claim's entry of ``docs/verdicts.json``, if there is one."""
    row = dict(row or {})
    statement = row.pop("statement", "") or getattr(claim, "statement", "")
    row.pop("id", None)
    refs = paper_refs(getattr(claim, "papers", None) or row.get("papers"))
    here = badge(recs[0].verdict, recs[0].budget) if recs else badge(NOT_RUN)
    shown = shown_recorded(recorded)
    line = (f'<p class="verdict-line"><span class="muted">recorded</span> <a href="#recorded">'
            f"{recorded_line(*shown) if shown else badge(NOT_RUN)}</a> · " if recorded else
            '<p class="verdict-line">') + f'<span class="muted">measured here</span> {here}</p>'  # fmt: skip
    head = f"<h1>{e(cid)}</h1>" + line + f'<p class="lead statement">{e(statement)}</p>'
    body = head + section("papers", "Papers", _paper_list(refs, papers))
    if recorded:
        body += _recorded_section(cid, recorded, recs)
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


def footer_html(store_root: str, commit: str | None, recorded: str | None = None) -> str:
    c = f" · commit <code>{e(commit[:12])}</code>" if commit else ""
    rec = (" The recorded verdicts are read from <code>docs/verdicts.json</code>; every other "
           "number here is recomputed from that store.") if recorded else (
           " Every number here is recomputed from that store.")  # fmt: skip
    return (f"Built by genlab {e(__version__)} from the store <code>{e(store_root)}</code> on "
            f"{when(time.time())}{c}.{rec}")  # fmt: skip
