"""Generate ``docs/verdicts.json`` from stores, and from it the verdict tables of
``docs/verdicts.md`` and of each family's page, so that none of them can disagree.

    .venv/bin/python tools/verdict_tables.py --smoke STORE --full STORE   # update, then render
    .venv/bin/python tools/verdict_tables.py --check                      # exit 1 if out of date

``--smoke`` is a store where ``genlab claims run --all --budget smoke`` ran, ``--full`` one where
``benchmarks/claims_suite.py`` ran. For each claim and budget the newest verdict at the claim's
current design (its default configuration at that budget) replaces the JSON's entry; a claim or
budget the stores do not hold keeps its entry (a verdict measured elsewhere, or before the rules
of issue #30: then ``"rules": "declared"`` and the tables mark it). Each table sits between
``<!-- verdicts:begin -->`` and ``<!-- verdicts:end -->``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

from genlab.claims import CLAIMS
from genlab.claims.base import BUDGETS
from genlab.claims.freeze import changes, design_hash
from genlab.store import Store

DOCS = Path(__file__).resolve().parent.parent / "docs"
JSON = DOCS / "verdicts.json"
BEGIN, END = "<!-- verdicts:begin -->", "<!-- verdicts:end -->"
PAGES = {"cl": "continual.md", "lora": "continual.md", "comp": "compositional.md",
         "dg": "domain_shift.md", "ood": "domain_shift.md", "diag": "diagnostics.md",
         "ens": "ensembles.md", "regime": "training_regime.md", "fed": "federated.md",
         "grokking": "grokking.md", "length": "length_generalization.md"}  # fmt: skip
HEADER = ("| claim | papers | scope | smoke | full | controls at full (measured) | full wall | "
          "full evidence (why, where inconclusive) |\n|---|---|---|---|---|---|---|---|")  # fmt: skip
OLD = "declared"  # measured before issue #30: licensed by declared control flags, not measurements


def reason_of(evidence: str) -> str:
    return evidence.split(" Inconclusive because ", 1)[1].rstrip(".") if (
        " Inconclusive because " in evidence) else ""  # fmt: skip


def seeds_needed(iv: dict[str, Any]) -> str | None:
    """Seeds at which an interval that straddles a threshold would clear the nearer one, at the
    observed spread (the half-width shrinks as 1/sqrt(n); the t quantile is held)."""
    est, lo, hi, n = iv["estimate"], iv["lo"], iv["hi"], iv["n"]
    if any(x is None or (isinstance(x, float) and math.isnan(x)) for x in (est, lo, hi)) or n < 2:
        return f"{iv['name']}: at least 3 seeds (now {n}) for an interval"
    marks = [-iv["smallest"], iv["smallest"]] if iv["absence"] else [iv["null"], iv["smallest"]]
    gap = min(abs(est - m) for m in marks)
    half = (hi - lo) / 2
    if gap < 1e-9:
        return f"{iv['name']}: the estimate sits on a threshold; no seed count decides"
    return f"{iv['name']}: about {math.ceil(n * (half / gap) ** 2)} seeds (now {n})"


def needs_of(claim_id: str, budget: str, reason: str, intervals: list[dict[str, Any]]) -> str:
    """What would decide an inconclusive verdict, from why it is inconclusive."""
    parts = []
    if "controls not run" in reason:
        parts.append(f"run its controls: genlab claims run {claim_id} --budget {budget}")
    if re.search(r"\bcame out\b", reason):
        parts.append("a control design that comes out as expected")
    if "did not fit" in reason or "no arm fit" in reason:
        parts.append("arms that fit: more steps or a setting that fits")
    if "at the floor" in reason or "at the ceiling" in reason:
        parts.append("arms off the floor / ceiling")
    if "only checks that the code runs" in reason:
        parts.append("the full budget")
    straddle = [iv for iv in intervals if iv.get("verdict") == "inconclusive"]
    if "intervals do not support" in reason or ("power" in reason) or (straddle and not parts):
        parts += [s for iv in straddle if (s := seeds_needed(iv))]
    return "; ".join(parts) or (
        "runs or parts that agree: all passing (reproduced) or at most "
        "half (not reproduced); more seeds or steps, see the evidence"
    )


def entry(store: Store, row: Any, times: dict[str, Any], claim: Any) -> dict[str, Any]:
    extras = store.verdict_extras(row.claim_id, row.config_id)
    reason = reason_of(row.evidence) if row.verdict == "inconclusive" else ""
    straddle = [iv for iv in extras.get("intervals", []) if iv.get("verdict") == "inconclusive"]
    if row.verdict == "inconclusive" and not reason:  # the judge itself could not decide
        reason = ("an interval straddles its threshold: " + "; ".join(iv["name"] for iv in straddle)
                  if straddle else "the judge's parts disagree (see the evidence)")  # fmt: skip
    t = times.get(f"{row.claim_id}@{row.budget}", {})
    return {
        "verdict": row.verdict, "decision": extras.get("decision", row.verdict),
        "scope": extras.get("scope", claim.scope), "design_hash": extras.get("design_hash"),
        "frozen": bool(extras.get("frozen")), "seeds": row.config.get("seeds"),
        "seed_rule": extras.get("seed_rule"),
        "wall_s": round(t["wall_s"], 1) if t.get("complete") else extras.get("wall_s"),
        "cpu_s": extras.get("cpu_s"), "controls": extras.get("controls", {}),
        "evidence": row.evidence, "reason": reason,
        "needs": needs_of(row.claim_id, row.budget, reason, extras.get("intervals", []))
        if reason else "",
        "measured": dt.datetime.fromtimestamp(row.created, dt.UTC).date().isoformat(),
        "rules": "measured",
    }  # fmt: skip


def from_stores(smoke: list[str], full: list[str]) -> dict[str, dict[str, Any]]:
    """The newest verdict per claim and budget at the claim's current design (its configuration at
    one of its seed rule's looks and, where recorded, its design hash), over the stores."""
    found: dict[str, dict[str, Any]] = {}
    newest: dict[tuple[str, str], float] = {}
    designs: dict[tuple[str, str], tuple[set[str], str]] = {}  # computed once per claim and budget
    for budget, roots in (("smoke", smoke), ("full", full)):
        for root in roots:
            store = Store(root)
            suite = Path(root, "claims_suite.json")
            times = json.loads(suite.read_text()) if suite.exists() else {}
            v = store.verdicts()
            for row in v[v["budget"] == budget].itertuples():
                if row.claim_id not in CLAIMS or row.created < newest.get(
                    (row.claim_id, budget), -1
                ):
                    continue
                claim = CLAIMS.get(row.claim_id).obj
                if (row.claim_id, budget) not in designs:
                    looks = rule.looks() if (rule := claim.rule(budget)) else [None]
                    ids = {claim.config_id(claim.config(budget, {"seeds": n} if n else None))
                           for n in looks}  # fmt: skip
                    designs[row.claim_id, budget] = ids, design_hash(claim, budget)
                ids, current = designs[row.claim_id, budget]
                if row.config_id not in ids:
                    continue  # a run under overrides, not the claim's design
                recorded = store.verdict_extras(row.claim_id, row.config_id).get("design_hash")
                if recorded and recorded != current:
                    continue  # judged by an earlier design (its judge or controls since changed)
                newest[row.claim_id, budget] = row.created
                found.setdefault(row.claim_id, {})[budget] = entry(store, row, times, claim)
    return found


def earlier(rec: dict[str, Any] | None, claim: Any, budget: str) -> dict[str, Any]:
    """A recorded entry the stores no longer hold at the current design: kept, and marked
    ``"design": "earlier"`` (not frozen) when its design hash is not the claim's current one."""
    if not rec:
        return {"verdict": "not run"}
    if rec.get("design_hash") and rec["design_hash"] != design_hash(claim, budget):
        return {**rec, "frozen": False, "design": "earlier"}
    return rec


def update(smoke: list[str], full: list[str]) -> dict[str, Any]:
    old = json.loads(JSON.read_text()) if JSON.exists() else {}
    new = from_stores(smoke, full)
    out = {}
    for e in sorted(CLAIMS.entries(), key=lambda e: e.name):
        c = e.obj
        prev = old.get(e.name, {})
        out[e.name] = {
            "id": e.name, "family": e.family, "scope": c.scope, "scope_note": c.scope_note,
            "papers": [p.row if p.row is not None else p.authors for p in c.papers],
            **{b: new.get(e.name, {}).get(b) or earlier(prev.get(b), c, b) for b in BUDGETS},
            "changes": changes(e.name),
        }  # fmt: skip
    return out


def cell(rec: dict[str, Any]) -> str:
    v = rec.get("verdict", "not run")
    if rec.get("rules") == OLD:
        return f"{v} (earlier rules)"
    return f"{v} (earlier design)" if rec.get("design") == "earlier" else v


def short(text: str, n: int = 240) -> str:
    text = " ".join(text.split()).replace("|", "/")
    return text if len(text) <= n else text[: n - 1].rsplit(" ", 1)[0] + " \u2026"


def row(d: dict[str, Any]) -> str:
    full, smoke = d["full"], d["smoke"]
    refs = ", ".join(f"#{p}" if isinstance(p, int) else p for p in d["papers"])
    ctl = ", ".join(f"{n}: {v or 'not run'}" for n, v in full.get("controls", {}).items()) or (
        "\u2014")  # fmt: skip
    wall = f"{full['wall_s']:.0f} s" if full.get("wall_s") else ""
    text = full.get("evidence") or (smoke.get("evidence", "") + " (smoke)" if smoke.get("evidence")
                                    else "")  # fmt: skip
    if full.get("reason"):
        text = f"{short(text, 160)} **Needs:** {full.get('needs', '')}"
    return (f"| `{d['id']}` | {refs} | {d['scope']} | {cell(smoke)} | {cell(full)} | {ctl} | "
            f"{wall} | {short(text, 400)} |")  # fmt: skip


def replace(path: Path, table: str) -> str:
    text = path.read_text()
    section = f"{BEGIN}\n{table}\n{END}"
    if BEGIN in text:
        head, rest = text.split(BEGIN, 1)
        return head + section + rest.split(END, 1)[1]
    return text.rstrip("\n") + "\n\n## Latest verdicts\n\nGenerated by `tools/verdict_tables.py` " \
        "from `docs/verdicts.json` (docs/verdicts.md says how to remake it).\n\n" + section + "\n"  # fmt: skip


def counts(data: dict[str, Any], budget: str) -> str:
    n: dict[str, int] = {}
    for d in data.values():
        n[d[budget]["verdict"]] = n.get(d[budget]["verdict"], 0) + 1
    old = sum(1 for d in data.values() if d[budget].get("rules") == OLD)
    stale = sum(1 for d in data.values() if d[budget].get("design") == "earlier")
    notes = [
        f"{old} under the earlier rules" if old else "",
        f"{stale} from an earlier design of the claim" if stale else "",
    ]
    notes = [t for t in notes if t]
    return ", ".join(f"{k} {v}" for k, v in sorted(n.items())) + (
        f" ({'; '.join(notes)})" if notes else "")  # fmt: skip


def render(data: dict[str, Any]) -> dict[Path, str]:
    rows = {k: row(d) for k, d in data.items()}
    summary = f"{len(data)} claims. Smoke: {counts(data, 'smoke')}. Full: {counts(data, 'full')}."
    targets = {DOCS / "verdicts.md": [summary, "", HEADER, *rows.values()]}
    for name, r in rows.items():
        targets.setdefault(DOCS / PAGES[name.split(".")[0]], [HEADER]).append(r)
    return {path: replace(path, "\n".join(lines)) for path, lines in targets.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smoke", action="append", default=[], help="a smoke store (repeatable)")
    ap.add_argument("--full", action="append", default=[], help="a full store (repeatable)")
    ap.add_argument("--check", action="store_true", help="exit 1 if a file would change")
    args = ap.parse_args(argv)
    data = update(args.smoke, args.full)
    files = {JSON: json.dumps(data, indent=1, sort_keys=True, allow_nan=False) + "\n",
             **render(data)}  # fmt: skip
    changed = [p.name for p, text in files.items() if not p.exists() or p.read_text() != text]
    if not args.check:
        for p, text in files.items():
            p.write_text(text)
    print(("would change: " if args.check else "written: ") + (", ".join(changed) or "nothing"))
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
