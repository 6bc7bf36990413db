"""The site's index and claim pages: what each shows, gathered from ``SiteData`` into the context
of its template (``templates/index.html``, ``templates/claim.html``, ``templates/sweep.html``).
Relative links only, so the site works from ``file://`` and any static host; every section and row
has an ``id`` to link to."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

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
from genlab.report.site.view import Link, Table, paper_items, table_of
from genlab.report.templating import render

NOT_RUN, NO_CLAIM = "not run", "no claim"
EARLIER = "declared"  # docs/verdicts.json's "rules" of a verdict from before controls were measured
RANKS = (*VERDICTS, NOT_RUN, NO_CLAIM)  # sort order of verdict cells


def evidence_path(cid: str) -> str:
    """Where a claim's recorded evidence figure lies, from the site's top folder."""
    return f"figures/evidence-{slug(cid)}.svg"


def short(text: str, n: int = 140) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rsplit(" ", 1)[0] + " \u2026"


def _counts(verdicts: list[str]) -> list[tuple[str, int]]:
    n: dict[str, int] = {}
    for v in verdicts:
        n[v] = n.get(v, 0) + 1
    return sorted(n.items(), key=lambda kv: RANKS.index(kv[0]))


def _recorded_cell(cid: str, data: SiteData) -> dict[str, Any] | None:
    """A claim's recorded verdict on the index: badge, date, scope, why and what would decide it
    (shortened; the claim page has them in full), and its evidence figure."""
    found = data.recorded_verdict(cid)
    if not found:
        return None
    budget, rec = found
    scope = rec.get("scope") or data.recorded[cid].get("scope")
    notes = [f"scope: {scope}"] if scope else []
    if reason := recorded_reason(rec):
        notes.append(f"why: {short(reason)}")
    if rec.get("needs"):
        notes.append(f"needs: {short(str(rec['needs']))}")
    return {"budget": budget, "rec": rec, "notes": notes, "figure": evidence_path(cid)}


def _paper_row(p: Any, data: SiteData) -> dict[str, Any]:
    claims, here, recorded = [], [], []
    for cid in p.claims:
        rec = data.latest(cid)
        found = data.recorded_verdict(cid)
        here.append(rec.verdict if rec else NOT_RUN)
        recorded.append(found[1]["verdict"] if found else NOT_RUN)
        claims.append(
            {
                "id": cid,
                "here": here[-1],
                "here_budget": rec.budget if rec else "",
                "recorded": recorded[-1],
                "recorded_budget": found[0] if found else "",
                "anchor": "#recorded" if cid in data.recorded else "",
            }
        )
    here, recorded = here or [NO_CLAIM], recorded or [NO_CLAIM]
    return {
        "p": p,
        "claims": claims,
        "verdicts": " ".join(slug(v) for v in here),
        "recorded": " ".join(slug(v) for v in recorded),
        "rank": min(RANKS.index(v) for v in here),
        "rec_rank": min(RANKS.index(v) for v in recorded),
        "covered": "yes" if p.components or p.claims else "no",
    }


def _claim_row(
    cid: str, row: dict[str, Any], data: SiteData, papers: dict[int, Any]
) -> dict[str, Any]:
    rec = data.latest(cid)
    cell = _recorded_cell(cid, data)
    rv = cell["rec"]["verdict"] if cell else NOT_RUN
    v = rec.verdict if rec else NOT_RUN
    return {
        "id": cid,
        "family": slug(str(row.get("family", ""))),
        "statement": row.get("statement", ""),
        "papers": paper_items(paper_refs(row.get("papers")), papers, ""),
        "verdict": v,
        "budget": rec.budget if rec else "",
        "created": rec.created if rec else None,
        "rank": RANKS.index(v),
        "recorded": cell,
        "rec_verdict": rv,
        "rec_rank": RANKS.index(rv),
    }


def index_page(data: SiteData, site: dict[str, Any], runs: dict[str, Any]) -> str:
    """``index.html``: the catalogue's papers and every claim with its recorded and measured
    verdicts, filterable and sortable; the sweeps and how many runs the store holds."""
    papers = data.papers
    catalogue = {p.number: p for p in papers}
    has_rec = bool(data.recorded)
    verdict_opts = [*VERDICTS, NOT_RUN, NO_CLAIM]
    rec_sel = [{"key": "recorded", "label": "Recorded", "options": verdict_opts}] if has_rec else []
    paper_selects = [
        {"key": "family", "label": "Family", "options": sorted({p.family for p in papers})},
        {"key": "tier", "label": "Tier", "options": sorted({p.tier for p in papers})},
        *rec_sel,
        {"key": "verdict", "label": "Measured here", "options": verdict_opts},
        {"key": "covered", "label": "Covered", "options": ["yes", "no"]},
    ]
    claim_opts = [*VERDICTS, NOT_RUN]
    claim_selects = (
        [{"key": "recorded", "label": "Recorded", "options": claim_opts}] if has_rec else []
    ) + [{"key": "verdict", "label": "Measured here", "options": claim_opts}]
    here = [data.latest(c).verdict if data.latest(c) else NOT_RUN for c in data.claims]  # type: ignore[union-attr]
    recorded = [
        (f[1]["verdict"] if (f := data.recorded_verdict(c)) else NOT_RUN) for c in data.claims
    ]
    return render(
        "site/index.html",
        **site,
        title="papers and claims",
        root="",
        has_rec=has_rec,
        n_papers=len(papers),
        covered=sum(1 for p in papers if p.components or p.claims),
        n_claims=len(data.claims),
        summary=_counts(here),
        rec_summary=_counts(recorded),
        paper_selects=paper_selects,
        claim_selects=claim_selects,
        paper_rows=[_paper_row(p, data) for p in papers],
        claim_rows=[
            _claim_row(cid, row, data, catalogue) for cid, row in sorted(data.claims.items())
        ],
        sweeps=list(data.sweeps.itertuples()),
        runs=runs,
    )


# ---- claim pages ----------------------------------------------------------------------------


def _config_table(claim: Any, config: dict[str, Any]) -> Table | None:
    fields = getattr(getattr(claim, "Config", None), "model_fields", {})
    df = pd.DataFrame(
        [
            {
                "setting": k,
                "value": json.dumps(v) if isinstance(v, list | dict) else v,
                "what it is": getattr(fields.get(k), "description", None) or "",
            }
            for k, v in config.items()
        ]
    )
    return table_of(df, "the claim's configuration for this verdict", "kv") if len(df) else None


def _provenance(rec: VerdictRecord) -> dict[str, Any]:
    from genlab.report.templating import when

    prov = dict(rec.extras.get("provenance") or {})
    runs = rec.runs
    facts: dict[str, Any] = {}
    if prov:
        commit = prov.get("git_commit")
        facts["genlab version"] = prov.get("genlab_version")
        facts["git commit"] = (
            (commit + (" (with uncommitted changes)" if prov.get("git_dirty") else ""))
            if commit
            else "not in a git work tree"
        )
        facts["torch version"] = prov.get("torch_version")
        facts["python"] = prov.get("python_version")
        facts["host"] = prov.get("host")
        facts["platform"] = prov.get("platform")
        facts["claim wall time"] = (
            (f"{prov['wall_s']:.1f} s (training the runs the store did not hold yet, then judging)")
            if prov.get("wall_s") is not None
            else None
        )
        facts["command line"] = " ".join(prov.get("argv") or []) or None
    else:
        facts["recorded"] = (
            "no provenance was recorded with this verdict (made before genlab "
            "kept it); below, what the store's runs hold"
        )
    if not runs.empty:
        facts["runs' wall time"] = f"{runs['wall_s'].sum():.1f} s in {len(runs)} runs"
        facts["runs' hosts"] = sorted(set(runs["host"].dropna()))
        facts["runs' genlab versions"] = sorted(set(runs["version"].dropna()))
    facts["run ids"] = rec.run_ids
    facts["verdict recorded"] = when(rec.created)
    return {k: v for k, v in facts.items() if v is not None}


def _runs_table(rec: VerdictRecord, final: pd.DataFrame) -> Table | None:
    """Per run: id (linking its page), status, step, wall time, the spec fields that vary, final
    accuracy per split."""
    from genlab.analysis.aggregate import run_labels

    runs = rec.runs
    if runs.empty:
        return None
    labels, varying = run_labels(runs)
    df = runs[["run_id", "status", "step", "wall_s"]].merge(
        labels[["run_id", *varying]], on="run_id"
    )
    metric = "accuracy" if (final["metric"] == "accuracy").any() else "loss"
    f = final[(final["metric"] == metric) & final["run_id"].isin(rec.run_ids)]
    splits = sorted(f["split"].unique(), key=lambda s: (not s.startswith("train"), s))
    note = ""
    if len(splits) > 8:
        note, splits = f"; {len(splits) - 8} more splits in the store", splits[:8]
    wide = f[f["split"].isin(splits)].pivot(index="run_id", columns="split", values="value")
    df = df.merge(wide.add_prefix(f"{metric} "), left_on="run_id", right_index=True, how="left")
    df["wall_s"] = df["wall_s"].round(1)
    df["run_id"] = [Link(r, f"../runs/{r}.html") for r in df["run_id"]]
    return table_of(df, f"the runs behind this verdict: final {metric} per split{note}", "runs")


CHECKED = {
    True: "checked: today's code gives this verdict's configuration from it",
    False: "today's budget defaults no longer give this configuration; the settings "
    "shown above are what ran",
    None: "",
}


def _verdict(
    rec: VerdictRecord, claim: Any, final: pd.DataFrame, figure: str | None, latest: bool
) -> dict[str, Any]:
    ctl = ", ".join(f"{n}: {v or 'not run'}" for n, v in rec.extras.get("controls", {}).items())
    tbl = rec.extras.get("table") or {}
    return {
        "rec": rec,
        "anchor": f"verdict-{slug(rec.budget)}-{rec.config_id}",
        "title": f"{'Latest verdict' if latest else 'Earlier verdict'}: {rec.budget} budget",
        "scope": rec.extras.get("scope"),
        "controls": ctl,
        "statistic": table_of(
            pd.DataFrame({"statistic": list(rec.statistic), "value": list(rec.statistic.values())}),
            "the numbers the verdict was decided on",
            "kv",
        )
        if rec.statistic
        else None,
        "evidence_table": table_of(
            pd.DataFrame(tbl["data"], columns=tbl["columns"]),
            "evidence table (the claim's own)",
            "evidence",
        )
        if tbl.get("columns")
        else None,
        "figure": figure,
        "figure_missing": bool(rec.figure) and not figure,
        "check": CHECKED[rec.command_checked],
        "config": _config_table(claim, rec.config),
        "runs": _runs_table(rec, final),
        "provenance": _provenance(rec),
    }


def _recorded_budget(budget: str, rec: dict[str, Any], recs: list[VerdictRecord]) -> dict[str, Any]:
    """One budget's recorded verdict beside the newest one measured in this store at that budget."""
    v = rec.get("verdict", NOT_RUN)
    here = next((r for r in recs if r.budget == budget), None)
    facts = {
        "measured": rec.get("measured"),
        "scope": rec.get("scope"),
        "the claim's decision": rec.get("decision")
        if rec.get("decision") not in (None, v)
        else None,
        "seeds": rec.get("seeds"),
        "wall time": f"{rec['wall_s']:.1f} s"
        if isinstance(rec.get("wall_s"), int | float)
        else None,
        "CPU time": f"{rec['cpu_s']:.1f} s" if isinstance(rec.get("cpu_s"), int | float) else None,
        "design hash": rec.get("design_hash"),
        "design frozen": {True: "yes", False: "no"}.get(rec.get("frozen")),
        "rules": "earlier (declared controls)" if rec.get("rules") == EARLIER else rec.get("rules"),
    }
    return {
        "budget": budget,
        "anchor": f"recorded-{slug(budget)}",
        "rec": rec,
        "decided": v in VERDICTS,
        "earlier": rec.get("rules") == EARLIER,
        "here": here,
        "here_anchor": f"verdict-{slug(here.budget)}-{here.config_id}" if here else "",
        "reason": recorded_reason(rec),
        "controls": rec.get("controls") or {},
        "facts": {k: x for k, x in facts.items() if x is not None},
    }


def claim_page(
    cid: str,
    row: dict[str, Any] | None,
    recs: list[VerdictRecord],
    claim: Any,
    papers: dict[int, Any],
    final: pd.DataFrame,
    figures: dict[str, str],
    site: dict[str, Any],
    recorded: dict[str, Any] | None = None,
) -> str:
    """``claims/<id>.html``; ``recorded``: the claim's entry of ``docs/verdicts.json``, if any."""
    row = dict(row or {})
    statement = row.pop("statement", "") or getattr(claim, "statement", "")
    row.pop("id", None)
    refs = paper_refs(getattr(claim, "papers", None) or row.get("papers"))
    items = []
    for ref, item in zip(refs, paper_items(refs, papers, "../index.html"), strict=True):
        n = ref["row"]
        about = (
            [] if n is None else [ref["authors"], ref["title"] and f"\u201c{ref['title']}\u201d"]
        )
        if n in papers:
            about += [papers[n].family, papers[n].tier]
        items.append({"item": item, "about": " · ".join(a for a in about if a)})
    rec_ctx = None
    if recorded:
        rec_ctx = {
            "entry": recorded,
            "shown": shown_recorded(recorded),
            "figure": "../" + evidence_path(cid),
            "budgets": [
                _recorded_budget(b, recorded[b] if isinstance(recorded.get(b), dict) else {}, recs)
                for b in BUDGETS
            ],
        }
    return render(
        "site/claim.html",
        **site,
        title=cid,
        root="../",
        cid=cid,
        statement=statement,
        papers=items,
        recorded=rec_ctx,
        about=row,
        registered=bool(row) or claim is not None,
        verdicts=[
            _verdict(r, claim, final, figures.get(r.config_id), i == 0) for i, r in enumerate(recs)
        ],
    )


def report_page(
    title: str,
    blocks: list[tuple[str, Any]],
    figures: dict[str, str],
    sweep: dict[str, Any],
    site: dict[str, Any],
) -> str:
    """A ``genlab.report`` Report (a sweep's) as a site page; figures already written as files.
    ``sweep``: its id, runs in the store and in the spec, for the reproduce line."""
    from genlab.report.tables import render_table

    out, n = [], 0
    for kind, val in blocks:
        if kind == "h":
            n += 1
            out.append({"kind": "h", "text": str(val), "anchor": slug(str(val))[:60] or f"s{n}"})
        elif kind == "p":
            out.append({"kind": "p", "text": str(val)})
        elif kind == "table":
            df, caption = val
            out.append({"kind": "table", "html": render_table(df, "html", caption)})
        elif kind == "fig":
            name, _png, caption = val
            out.append({"kind": "fig", "src": f"../{figures[name]}", "caption": caption})
    return render("site/sweep.html", **site, title=title, root="../", blocks=out, sweep=sweep)
