"""The claims report: every registered claim with its latest verdict, its scope, what its controls
measured, evidence, evidence figure and the papers it cites (by catalogue number and name), read
from the store's ``verdicts`` table and the extras beside each verdict. A verdict measured with a
user's overrides (``claims run --set``, e.g. their own methods) is shown only where the claim has
none at a recorded design, and is labelled as a user design."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from genlab.registry import Entry
from genlab.report.document import Report
from genlab.store import Store


def user_design(extras: dict) -> bool:
    """Whether a verdict was measured with a user's overrides (``claims run --set``): the runner
    records no design hash for it, where a recorded design has one (older verdicts have neither
    key and count as recorded)."""
    return "design_hash" in extras and extras["design_hash"] is None


def build_claims_report(store: Store, claims: Sequence[Entry], family: str | None = None) -> Report:
    """The report over ``claims`` (the claim registry's entries, passed by the caller: report does
    not import the claims), those of ``family`` only when given."""
    from genlab.papers import catalogue

    papers = catalogue()
    entries = [e for e in claims if family is None or e.family == family]
    verdicts = store.verdicts()
    if not verdicts.empty:  # the newest at a recorded design; a user's design only without one
        verdicts["user"] = [
            user_design(store.verdict_extras(c, i))
            for c, i in zip(verdicts["claim_id"], verdicts["config_id"], strict=True)
        ]
    latest = (
        verdicts.sort_values(["user", "created"], ascending=[False, True])
        .groupby("claim_id")
        .tail(1)
        .set_index("claim_id")
        if not verdicts.empty
        else pd.DataFrame()
    )
    rep = Report("genlab claims" + (f": {family}" if family else ""))
    counts: dict[str, int] = {}
    rows = []
    for e in entries:
        claim = e.obj
        refs = getattr(claim, "papers", ())  # full references; catalogue names otherwise
        cites = (
            "; ".join(r.text() for r in refs)
            if refs
            else "; ".join(f"#{n} {papers[n].name}" if n in papers else f"#{n}" for n in e.papers)
        )
        controls = {}
        if claim.id in latest.index:
            v = latest.loc[claim.id]
            verdict, budget, evidence, figure = (
                v["verdict"],
                v["budget"],
                v["evidence"],
                v["figure"],
            )
            controls = store.verdict_extras(claim.id, v["config_id"]).get("controls", {})
            if v["user"]:
                verdict = f"{verdict} (user design)"
        else:
            verdict, budget, evidence, figure = "not run", "", "", None
        scope = getattr(claim, "scope", "")
        ctl = ", ".join(f"{n} {m or 'not run'}" for n, m in controls.items())
        counts[verdict] = counts.get(verdict, 0) + 1
        rows.append(
            {
                "claim": claim.id,
                "verdict": verdict,
                "budget": budget,
                "scope": scope,
                "controls": ctl,
                "papers": cites,
            }
        )
        rep.h(claim.id)
        rep.p(
            f"{verdict}"
            + (f" ({budget} budget)" if budget else "")
            + f", scope {scope}"
            + (f" ({claim.scope_note})" if getattr(claim, "scope_note", "") else "")
            + (f". Controls measured: {ctl}" if ctl else "")
            + f". Papers: {cites}."
        )
        if claim.id in latest.index and latest.loc[claim.id]["user"]:
            rep.p(
                "User design: this verdict was measured with overrides (`claims run --set`), "
                "not at the design recorded in claims.lock; it speaks for that configuration "
                f"only: {latest.loc[claim.id]['config']}."
            )
        rep.p(f"Statement: {claim.statement}")
        if evidence:
            rep.p(f"Evidence: {evidence}")
        if figure and Path(figure).is_file():
            rep.fig(claim.id.replace(".", "_"), Path(figure).read_bytes(), f"evidence: {claim.id}")
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "no claims"
    cols = ["claim", "verdict", "budget", "scope", "controls", "papers"]
    rep.blocks.insert(0, ("table", (pd.DataFrame(rows, columns=cols), "verdicts")))
    rep.blocks.insert(0, ("p", f"{len(entries)} claims: {summary}."))
    return rep
