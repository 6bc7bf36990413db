"""Evidence figures of the recorded verdicts, drawn from ``docs/verdicts.json`` when the site is
built (no store needed): for each budget, each part of the decision as its interval against the
thresholds that make it decisive, coloured by what that part says. A small SVG per claim
(``templates/evidence.svg``), so the repository holds no images and the figure cannot disagree
with the file.

A part is an estimate with its confidence interval, as ``genlab.claims.guards.Interval`` holds it:
read from an entry's ``intervals`` where ``tools/verdict_tables.py`` recorded them, else from the
entry's evidence text, where the claims write every such part as ``Interval.text()`` does
(``fast_slow - ewc -0.014 [-0.045, 0.018] (n=5; effect when CI > 0 and estimate reaches 0.02)``).
An interval written without its thresholds (``gap 0.030 [0.013, 0.048]``) is drawn without them;
a verdict decided by counts or per-arm values has no part, and its figure says so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from genlab.report.templating import render

NUM = r"[-+]?(?:\d+(?:\.\d*)?(?:e[-+]?\d+)?|nan|inf)"
# a part's name: from the last separator (start, ";", ":", "(", ". ", ", ") to the estimate,
# parentheses allowed when balanced ("student - teacher (class)")
_NAME = r"(?:^|(?<=[;:(])\s*|(?<=\.\s)|(?<=,\s))((?:[^;:\[\]()]|\([^()]*\))*?)"
_STRICT = re.compile(
    _NAME + rf" ({NUM}) \[({NUM}), ({NUM})\] \(n=(\d+); (?:effect when CI "
    rf"([<>]) ({NUM}) and estimate reaches ({NUM})|absent when within ±({NUM}))\)"
)
_LOOSE = re.compile(_NAME + rf" ({NUM}) \[({NUM}), ({NUM})\]")

WIDTH, PLOT = 640, (206.0, 430.0)
ROW, HEAD, TOP = 18, 22, 24


@dataclass
class Part:
    """One interval of a decision; ``null`` and ``smallest`` None when the record has no
    thresholds (then ``verdict`` is None too)."""

    name: str
    estimate: float
    lo: float
    hi: float
    n: int | None = None
    null: float | None = None
    smallest: float | None = None
    above: bool = True
    absence: bool = False
    verdict: str | None = None


def _num(v: Any) -> float:
    try:
        return float(v) if v is not None else math.nan
    except (TypeError, ValueError):
        return math.nan


def part_verdict(p: Part) -> str | None:
    """What one part says, by the rule of ``genlab.claims.guards.Interval.verdict`` (checked
    against it by tests/test_site.py); None without thresholds."""
    if p.smallest is None or (p.null is None and not p.absence):
        return None
    if any(math.isnan(x) for x in (p.estimate, p.lo, p.hi)):
        return "inconclusive"
    if p.absence:
        if -p.smallest < p.lo and p.hi < p.smallest:
            return "reproduced"
        if p.lo > p.smallest or p.hi < -p.smallest:
            return "not reproduced"
        return "inconclusive"
    s = 1.0 if p.above else -1.0
    lo, hi = (p.lo, p.hi) if p.above else (-p.hi, -p.lo)
    if lo > s * (p.null or 0.0) and s * p.estimate >= s * p.smallest:
        return "reproduced"
    if hi < s * p.smallest:
        return "not reproduced"
    return "inconclusive"


def _clean_name(name: str) -> str:
    return " ".join(name.split()).strip(" ,") or "—"


def parts_from_text(evidence: str) -> list[Part]:
    """The parts an evidence sentence states: ``Interval.text()``'s form (with thresholds), else
    any ``name estimate [lo, hi]`` (without)."""
    parts = []
    for m in _STRICT.finditer(evidence):
        name, est, lo, hi, n, rel, null, smallest, band = m.groups()
        if band is not None:
            p = Part(
                _clean_name(name),
                float(est),
                float(lo),
                float(hi),
                int(n),
                smallest=float(band),
                absence=True,
            )
        else:
            p = Part(
                _clean_name(name),
                float(est),
                float(lo),
                float(hi),
                int(n),
                float(null),
                float(smallest),
                above=rel == ">",
            )
        p.verdict = part_verdict(p)
        parts.append(p)
    if parts:
        return parts
    return [
        Part(_clean_name(m.group(1)), float(m.group(2)), float(m.group(3)), float(m.group(4)))
        for m in _LOOSE.finditer(evidence)
        if _clean_name(m.group(1)) != "—"
    ]


def parts_of(rec: dict[str, Any]) -> list[Part]:
    """A recorded budget's parts: its ``intervals`` if recorded, else read from its evidence."""
    if rec.get("intervals"):
        parts = []
        for iv in rec["intervals"]:
            p = Part(
                str(iv.get("name", "")),
                _num(iv.get("estimate")),
                _num(iv.get("lo")),
                _num(iv.get("hi")),
                iv.get("n"),
                _num(iv.get("null", 0.0)),
                _num(iv.get("smallest", 0.0)),
                bool(iv.get("above", True)),
                bool(iv.get("absence", False)),
            )
            p.verdict = iv.get("verdict") or part_verdict(p)
            parts.append(p)
        return parts
    return parts_from_text(str(rec.get("evidence") or ""))


def _fmt(x: float) -> str:
    return "nan" if math.isnan(x) else f"{x:.3f}"


def _marks(p: Part) -> list[float]:
    """The values a part's row must keep in view: the interval and its thresholds."""
    marks = [p.estimate, p.lo, p.hi]
    if p.absence and p.smallest is not None:
        marks += [-p.smallest, p.smallest]
    elif p.smallest is not None:
        marks += [p.null or 0.0, p.smallest]
    return [x for x in marks if math.isfinite(x)]


def _ticks(lo: float, hi: float) -> list[float]:
    """Three to six round values between ``lo`` and ``hi``."""
    raw = (hi - lo) / 4
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    return [round(first + i * step, 12) for i in range(int((hi - first) / step) + 1)]


class Scale:
    """One x scale for every part of a claim (both budgets), so that rows compare."""

    def __init__(self, parts: list[Part]) -> None:
        finite = [x for p in parts for x in _marks(p)]
        lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
        if hi - lo < 1e-12:
            pad = abs(lo) * 0.1 or 0.5
            lo, hi = lo - pad, hi + pad
        pad = (hi - lo) * 0.06
        self.lo, self.hi = lo - pad, hi + pad

    def __call__(self, v: float | None) -> float | None:
        if v is None or not math.isfinite(v):
            return None
        return round(PLOT[0] + (v - self.lo) / (self.hi - self.lo) * (PLOT[1] - PLOT[0]), 1)

    def ticks(self) -> list[dict[str, Any]]:
        return [{"x": self(t), "label": f"{t:g}"} for t in _ticks(self.lo, self.hi)]


def _row(p: Part, y: float, x: Scale) -> dict[str, Any]:
    """Pixel positions of one part's interval, estimate and thresholds."""
    label = p.name if len(p.name) <= 32 else p.name[:31] + "\u2026"
    numbers = f"{_fmt(p.estimate)} [{_fmt(p.lo)}, {_fmt(p.hi)}]" + (f" n={p.n}" if p.n else "")
    if p.absence and p.smallest is not None:
        rule = f"reproduced within ±{p.smallest:g}"
    elif p.smallest is not None:
        rule = (
            f"effect when the CI is {'above' if p.above else 'below'} {p.null or 0.0:g} and "
            f"the estimate reaches {p.smallest:g}"
        )
    else:
        rule = "no threshold in the record"
    return {
        "y": y,
        "label": label,
        "name": p.name,
        "numbers": numbers,
        "rule": rule,
        "verdict": p.verdict or "unknown",
        "est": x(p.estimate),
        "lo": x(p.lo),
        "hi": x(p.hi),
        "null": None if p.absence or p.smallest is None else x(p.null or 0.0),
        "smallest": None if p.absence or p.smallest is None else x(p.smallest),
        "band": (x(-p.smallest), x(p.smallest)) if p.absence and p.smallest is not None else None,
    }


def figure(claim_id: str, entry: dict[str, Any], budgets: tuple[str, ...]) -> str:
    """The SVG of a claim's recorded entry: one block per budget (its verdict, date and parts) on
    one scale, with its ticks under the last block."""
    recs = {b: entry[b] if isinstance(entry.get(b), dict) else {} for b in budgets}
    parts = {
        b: parts_of(r) if r.get("verdict", "not run") != "not run" else [] for b, r in recs.items()
    }
    x = Scale([p for ps in parts.values() for p in ps])
    blocks, y = [], float(TOP)
    for b, rec in recs.items():
        verdict = rec.get("verdict") or "not run"
        head = {
            "y": y + 15,
            "budget": b,
            "verdict": verdict,
            "measured": rec.get("measured", ""),
            "scope": rec.get("scope") or entry.get("scope") or "",
        }
        y += HEAD
        rows = []
        for p in parts[b]:
            rows.append(_row(p, y + ROW / 2, x))
            y += ROW
        note = ""
        if verdict == "not run":
            note = "not run at this budget"
        elif not parts[b]:
            note = "decided by counts or per-arm values, not by an interval: see the evidence"
        if note:
            y += ROW
        blocks.append({"head": head, "rows": rows, "note": note, "note_y": y - 5})
        y += 6
    axis = None
    if any(parts.values()):  # the scale's ticks and the legend
        axis = {"y": y, "ticks": x.ticks()}
        y += 18 + 22
    return render(
        "site/evidence.svg",
        claim_id=claim_id,
        blocks=blocks,
        axis=axis,
        width=WIDTH,
        height=int(y + 4),
        plot=PLOT,
    )
