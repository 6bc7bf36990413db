"""The claims report: every registered claim with its latest verdict, its scope, what its controls
measured, evidence, evidence figure and the papers it cites (by catalogue number and name), read
from the store's ``verdicts`` table and the extras beside each verdict."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from genlab.registry import Entry
from genlab.report.document import Report
from genlab.store import Store


def build_claims_report(store: Store, claims: Sequence[Entry], family: str | None = None) -> Report:
    """The report over ``claims`` (the claim registry's entries, passed by the caller: report does
    not import the claims), those of ``family`` only when given."""
    from genlab.papers import catalogue

    papers = catalogue()
    entries = [e for e in claims if family is None or e.family == family]
    verdicts = store.verdicts()
    latest = (verdicts.sort_values("created").groupby("claim_id").tail(1).set_index("claim_id")
              if not verdicts.empty else pd.DataFrame())  # fmt: skip
    rep = Report("genlab claims" + (f": {family}" if family else ""))
    counts: dict[str, int] = {}
    rows = []
    for e in entries:
        claim = e.obj
        refs = getattr(claim, "papers", ())  # full references; catalogue names otherwise
        cites = "; ".join(r.text() for r in refs) if refs else "; ".join(
            f"#{n} {papers[n].name}" if n in papers else f"#{n}" for n in e.papers)  # fmt: skip
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
        else:
            verdict, budget, evidence, figure = "not run", "", "", None
        scope = getattr(claim, "scope", "")
        ctl = ", ".join(f"{n} {m or 'not run'}" for n, m in controls.items())
        counts[verdict] = counts.get(verdict, 0) + 1
        rows.append({"claim": claim.id, "verdict": verdict, "budget": budget, "scope": scope,
                     "controls": ctl, "papers": cites})  # fmt: skip
        rep.h(claim.id)
        rep.p(f"{verdict}" + (f" ({budget} budget)" if budget else "") + f", scope {scope}"
              + (f" ({claim.scope_note})" if getattr(claim, "scope_note", "") else "")
              + (f". Controls measured: {ctl}" if ctl else "") + f". Papers: {cites}.")  # fmt: skip
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
