"""The guards every claim inherits: a verdict drawn from arms that never fit their training
distribution, that all sit at the floor (or the ceiling), or from a confidence interval that
straddles its threshold, is ``inconclusive`` — never a refutation (DESIGN.md, "Claims can fail,
and can pass").

Each claim declares its ``fit`` and ``floor`` guards with their levels (or ``NotApplicable`` with
the reason); the base runs them on the per-arm summary, and checks the decision's ``Interval``s
(the power guard). Nothing here reads the store: guards are functions of the arm table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

from genlab.analysis.stats import mean_ci

Verdict = Literal["reproduced", "not reproduced", "inconclusive"]
# the level of the intervals a decision reads: 95%, or less than the whole error budget at one look
# of a sequential seed rule (``genlab.analysis.sequential``), set by the claim runner for that look
CONFIDENCE: ContextVar[float] = ContextVar("confidence", default=0.95)


@dataclass(frozen=True)
class GuardResult:
    """What one guard found: ``ok`` or the reason the verdict cannot stand."""

    kind: str
    ok: bool
    detail: str


def arm_name(arm: dict[str, Any]) -> str:
    return "/".join(f"{v}" for v in arm.values()) or "all runs"


class Guard:
    """Base of the declared guards. ``check`` gets the per-arm summary (one row per arm: the arm
    labels, then ``<measure>`` as aggregated by the claim) and the arm label columns."""

    kind = "guard"

    def check(self, arms: pd.DataFrame, keys: Sequence[str]) -> GuardResult:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.__dict__}

    def _arms(self, arms: pd.DataFrame, where: dict[str, Sequence[Any]] | None) -> pd.DataFrame:
        for key, allowed in (where or {}).items():
            arms = arms[arms[key].isin(list(allowed))]
        return arms


@dataclass(frozen=True)
class Fit(Guard):
    """Every arm (or those matching ``where``) reaches ``level`` on ``measure``, its
    in-distribution metric (``below``: falls to it, for a loss). A NaN (a diverged or missing
    run) does not fit. ``any_arm``: one fitting arm is enough (a grid whose claim is that some
    cells do not fit, as Liu et al.'s confusion phase)."""

    measure: str
    level: float
    where: dict[str, tuple[Any, ...]] | None = None
    below: bool = False
    any_arm: bool = False
    kind = "fit"

    def check(self, arms: pd.DataFrame, keys: Sequence[str]) -> GuardResult:
        rows = self._arms(arms, self.where)
        bad = []
        for _, r in rows.iterrows():
            v = r[self.measure]
            fitted = v <= self.level if self.below else v >= self.level
            if not fitted or math.isnan(v):
                rel = ">" if self.below else "<"
                bad.append(
                    f"arm {arm_name({k: r[k] for k in keys})} did not fit "
                    f"({self.measure} {v:.3f} {rel} {self.level:g})"
                )
        if rows.empty and self.where is not None and not arms.empty:  # e.g. a subset of shifts
            return GuardResult(self.kind, True, f"no arm matches {self.where}")
        if rows.empty:
            return GuardResult(self.kind, False, "no arm to check the fit of")
        if self.any_arm:
            ok = len(bad) < len(rows)
            return GuardResult(
                self.kind,
                ok,
                f"{len(rows) - len(bad)} of {len(rows)} arms fit "
                f"({self.measure} level {self.level:g})"
                if ok
                else f"no arm fit: {'; '.join(bad)}",
            )
        return GuardResult(
            self.kind,
            not bad,
            "; ".join(bad)
            or f"every arm fit ({self.measure} {'<=' if self.below else '>='} {self.level:g})",
        )


@dataclass(frozen=True)
class Floor(Guard):
    """Not every arm may sit at or below ``level`` on ``measure`` (chance plus a margin):
    arms all at the floor cannot be told apart."""

    measure: str
    level: float
    kind = "floor"

    def check(self, arms: pd.DataFrame, keys: Sequence[str]) -> GuardResult:
        v = arms[self.measure]
        if len(v) and bool((v <= self.level).all()):
            return GuardResult(
                self.kind,
                False,
                f"every arm is at the floor ({self.measure} <= {self.level:g}: max {v.max():.3f})",
            )
        return GuardResult(self.kind, True, f"some arm is above the floor ({self.level:g})")


@dataclass(frozen=True)
class Ceiling(Guard):
    """Not every arm may sit at or above ``level`` on ``measure``: arms all at the ceiling
    cannot be told apart."""

    measure: str
    level: float
    kind = "ceiling"

    def check(self, arms: pd.DataFrame, keys: Sequence[str]) -> GuardResult:
        v = arms[self.measure]
        if len(v) and bool((v >= self.level).all()):
            return GuardResult(
                self.kind,
                False,
                f"every arm is at the ceiling ({self.measure} "
                f">= {self.level:g}: min {v.min():.3f})",
            )
        return GuardResult(self.kind, True, f"some arm is below the ceiling ({self.level:g})")


@dataclass(frozen=True)
class NotApplicable(Guard):
    """A guard declared as not applying, with the reason (shown in ``genlab claims show``)."""

    what: str
    reason: str
    kind = "n/a"

    def check(self, arms: pd.DataFrame, keys: Sequence[str]) -> GuardResult:
        return GuardResult(f"{self.what} (n/a)", True, self.reason)


@dataclass(frozen=True)
class Interval:
    """An estimate with its confidence interval and the two thresholds that make it decisive.

    For an effect (``absence=False``): reproduced when the CI lies wholly beyond ``null`` and the
    estimate reaches ``smallest`` (the effect size the claim states); not reproduced when the CI
    excludes ``smallest`` on the other side; otherwise (the CI straddles) inconclusive.
    ``above=False`` flips the direction (an effect that lowers the quantity). For an absence
    claim: reproduced when the CI lies within ``±smallest`` (it rules out the effect), not
    reproduced when it lies wholly beyond it."""

    name: str
    estimate: float
    lo: float
    hi: float
    n: int
    null: float = 0.0
    smallest: float = 0.0
    above: bool = True
    absence: bool = False

    @classmethod
    def of(cls, name: str, values: Sequence[float], **kw: Any) -> Interval:
        """Mean and Student-t CI of ``values`` (one per seed), at ``CONFIDENCE`` (95% unless a
        sequential look spends less)."""
        c = mean_ci(list(values), CONFIDENCE.get())
        return cls(name, c["mean"], c["ci_lo"], c["ci_hi"], int(c["n"]), **kw)

    def verdict(self) -> Verdict:
        if any(math.isnan(x) for x in (self.estimate, self.lo, self.hi)):
            return "inconclusive"
        if self.absence:
            if -self.smallest < self.lo and self.hi < self.smallest:
                return "reproduced"
            return (
                "not reproduced"
                if self.lo > self.smallest or self.hi < -self.smallest
                else ("inconclusive")
            )
        s = 1.0 if self.above else -1.0
        lo, hi = (self.lo, self.hi) if self.above else (-self.hi, -self.lo)
        if lo > s * self.null and s * self.estimate >= s * self.smallest:
            return "reproduced"
        if hi < s * self.smallest:
            return "not reproduced"
        return "inconclusive"

    def text(self) -> str:
        if self.absence:
            rule = f"absent when within ±{self.smallest:g}"
        else:
            rel = ">" if self.above else "<"
            rule = f"effect when CI {rel} {self.null:g} and estimate reaches {self.smallest:g}"
        return (
            f"{self.name} {self.estimate:.3f} [{self.lo:.3f}, {self.hi:.3f}] (n={self.n}; {rule})"
        )


def count_verdict(passing: int, n: int, min_n: int = 1) -> Verdict:
    """Units (seeds, cells) that must all show the effect: all pass (and at least ``min_n``):
    reproduced; at most half: not reproduced; in between: inconclusive."""
    if n >= min_n and passing == n:
        return "reproduced"
    return "not reproduced" if 2 * passing <= n else "inconclusive"


def combine(verdicts: Sequence[Verdict]) -> Verdict:
    """Conditions that must all hold: any refuted -> not reproduced; all hold -> reproduced."""
    if not verdicts:
        return "inconclusive"
    if "not reproduced" in verdicts:
        return "not reproduced"
    return "reproduced" if all(v == "reproduced" for v in verdicts) else "inconclusive"


def power_check(verdict: Verdict, intervals: Sequence[Interval]) -> GuardResult:
    """A decision drawn from intervals must agree with them: ``reproduced`` needs every interval
    decisive for the effect, ``not reproduced`` at least one decisive against it."""
    if not intervals:
        return GuardResult("power", True, "no interval to check")
    own = [iv.verdict() for iv in intervals]
    ok = (
        verdict == "inconclusive"
        or (verdict == "reproduced" and all(v == "reproduced" for v in own))
        or (verdict == "not reproduced" and "not reproduced" in own)
    )
    detail = "; ".join(iv.text() for iv in intervals)
    return GuardResult(
        "power", ok, detail if ok else f"the intervals do not support '{verdict}': {detail}"
    )


__all__ = [
    "Ceiling",
    "Fit",
    "Floor",
    "Guard",
    "GuardResult",
    "Interval",
    "NotApplicable",
    "Verdict",
    "combine",
    "count_verdict",
    "power_check",
]
