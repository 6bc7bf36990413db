"""The ``Claim``: a small declarative study — its papers, statement, labelled arms, measures,
guards, controls and a three-way decision — judged by a base that owns everything else.

A claim declares, before anything runs::

    class DelayedGeneralization(Claim):
        id = "grokking.delayed_generalization"
        papers = (Ref(55, "Power et al. 2022", "Grokking: generalization beyond overfitting ..."),)
        statement = "..."                                   # the predicate, with its thresholds
        Config = GrokkingConfig                             # validated knobs; budgets fill them
        budgets = {"smoke": {...}, "full": {...}}
        measures = {"test": Final("test/heldout"), "train": Final("train/main"), ...}
        fit = Fit("train", 0.99)                            # guard: an arm that did not fit
        floor = NotApplicable("floor", "one arm: reaching the level is the claim")
        aggregate = "mean"                                  # or "max" over seeds (x lrs)
        figure = Curves(("train/main", "test/heldout"))
        controls = {"negative": Control({"weight_decay": 0.0}, "not reproduced", "why")}
        def arms(self, cfg): return Design(...).expand()     # labelled runs
        def decide(self, cfg, table): return Decision(...)   # three-way, with its numbers

The base trains nothing itself (``claims.runner`` does): ``judge`` reads each run's measures from
the store into a per-run ``table`` (arm labels + measures + status), summarises it per arm, runs
the guards (fit, floor/ceiling, power: see ``guards.py``), asks ``decide`` for the verdict and
writes the evidence. ``evaluate(cfg, table)`` is the same judgement on a table built by hand,
which is how the judge tests feed each claim synthetic results.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, get_args

import numpy as np
import pandas as pd
from pydantic import ValidationError

from genlab.analysis.aggregate import arm_summary
from genlab.analysis.sequential import SeedRule
from genlab.claims.guards import Guard, GuardResult, Interval, NotApplicable, Verdict, power_check
from genlab.claims.measures import Measure, measure_table
from genlab.claims.search import DRAW, best_draw
from genlab.design import Arm
from genlab.errors import SpecError
from genlab.registry import Params, format_validation_error
from genlab.spec import RunSpec

Budget = Literal["smoke", "full"]
BUDGETS: tuple[Budget, ...] = get_args(Budget)  # smallest first
REPLICATES = ("seed", "data_seed")
# what a verdict is about: the paper's protocol at reduced size, a scaled-down stand-in, or
# genlab's reading of an abstract whose method or data is unavailable
Scope = Literal["paper", "proxy", "reconstruction"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
# the synthetic tables the audit feeds a judge: the stated effect, none, an arm that did not fit
Case = Literal["effect", "null", "unfit"]
CASES: tuple[Case, ...] = get_args(Case)


def uniform_rule(budget: Budget, seeds: Any) -> SeedRule | None:
    """genlab's one pre-registered seed rule (issue #36, declared for every claim at once on
    2026-12-03, not per claim after its result): at the full budget, a design that replicates over
    ``n >= 2`` seeds is read at ``n`` and, while an interval over units that more seeds add to
    still straddles its threshold (``runner.more_seeds``), once more at ``2n`` (alpha 0.05 spent
    half at each look). Smoke budgets check that the code runs and keep their seeds."""
    if budget == "full" and isinstance(seeds, int) and seeds >= 2:
        return SeedRule(seeds, 2 * seeds, seeds)
    return None


@dataclass(frozen=True)
class Ref:
    """A paper a claim tests: its catalogue row (``None`` for a paper outside the seed catalogue,
    e.g. a benchmark the claim follows), authors and year, and title."""

    row: int | None
    authors: str
    title: str

    def text(self) -> str:
        where = f"catalogue #{self.row}" if self.row is not None else "not in the catalogue"
        return f"{self.authors}, \u201c{self.title}\u201d ({where})"


@dataclass(frozen=True)
class Control:
    """A trained configuration (config overrides on a budget) whose verdict is known in advance:
    a negative control follows the paper's own logic to a setting that must not show the effect;
    a positive control shows that ``reproduced`` is reachable. ``slow`` marks one that takes more
    than about 5 s on a quiet 2-core machine (its test then runs with the slow tests); ``heavy``
    one that trains for about a minute or more (usually a full budget from scratch): its test is
    marked ``heavy`` and runs with ``make test-heavy``, not in CI, as the full-budget claims run in
    benchmarks. ``open``
    records what was measured when a control did not come out as expected: an open problem of the
    claim, printed by ``claims show``, whose test is a strict expected failure until it is fixed
    (with the heavy tests). ``open`` is history, never a verdict input: ``Claim.recorded`` reads
    what each control *measured* (its verdict in the store)."""

    overrides: dict[str, Any]
    expect: Verdict
    why: str
    budget: Budget = "smoke"
    slow: bool = False
    heavy: bool = False
    open: str = ""

    @property
    def kind(self) -> str:
        """``negative`` (must fail) or ``positive`` (must pass)."""
        return "negative" if self.expect == "not reproduced" else "positive"


@dataclass
class Decision:
    """A claim's verdict from its table: the numbers it rests on, one sentence, the intervals it
    used (checked by the power guard) and, where it read only some arms, which: ``reads`` is a
    list of label filters (``{label: value or list of values}``, an arm matching any one is
    read); the fit and floor guards then judge those arms alone, so a refutation drawn from arms
    that fit stands when an arm it did not read failed to fit. ``None``: every arm."""

    verdict: Verdict
    stats: dict[str, float]
    sentence: str
    intervals: Sequence[Interval] = ()
    reads: Sequence[dict[str, Any]] | None = None


@dataclass
class ClaimResult:
    """A verdict with its evidence: the statistic, the evidence text, the per-arm evidence table,
    the per-run table, what each guard found, and the figure."""

    claim_id: str
    verdict: Verdict
    statistic: dict[str, float]
    evidence: str
    table: pd.DataFrame = field(default_factory=pd.DataFrame)
    runs: pd.DataFrame = field(default_factory=pd.DataFrame)
    guards: list[GuardResult] = field(default_factory=list)
    figure: Path | None = None
    config: dict[str, Any] = field(default_factory=dict)
    run_ids: list[str] = field(default_factory=list)
    scope: Scope = "paper"
    # the verdict the judge drew before ``Claim.recorded`` asked for its controls, and what each
    # applicable control measured (None: not run at this design)
    decision: Verdict | None = None
    controls: dict[str, Verdict | None] = field(default_factory=dict)
    intervals: list[Interval] = field(default_factory=list)


class Claim:
    """Base class; see the module docstring. Subclasses set the class attributes and implement
    ``arms`` and ``decide``."""

    id: ClassVar[str]
    papers: ClassVar[tuple[Ref, ...]]
    statement: ClassVar[str]
    Config: ClassVar[type[Params]]
    budgets: ClassVar[dict[str, dict[str, Any]]] = {"smoke": {}, "full": {}}
    measures: ClassVar[dict[str, Measure]] = {}
    fit: ClassVar[Guard]
    floor: ClassVar[Guard]
    extra_guards: ClassVar[tuple[Guard, ...]] = ()
    aggregate: ClassVar[Literal["mean", "max", "median"]] = "mean"
    replicates: ClassVar[tuple[str, ...]] = REPLICATES
    figure: ClassVar[Any] = None
    controls: ClassVar[dict[str, Control]] = {}
    # what the verdict is about (``SCOPES``) and, for a proxy or a reconstruction, what is scaled
    # down or reconstructed and from what; a reconstruction's decision is a decision about genlab's
    # reading of the paper, reported as such (it is not turned into "inconclusive")
    scope: ClassVar[Scope]
    scope_note: ClassVar[str] = ""
    # False when the smoke budget cannot reach both decisions (one or two seeds, steps too few to
    # fit): a smoke run then only checks that the code runs, and its verdict says so
    smoke_decides: ClassVar[bool] = True
    # seeds by a pre-registered sequential rule, per budget (the config's ``seeds`` is its first
    # look): the runner adds seeds in groups while an interval straddles, up to the rule's maximum;
    # a budget not named here takes ``uniform_rule`` (``None`` declares none)
    seed_rule: ClassVar[dict[str, SeedRule | None]] = {}
    # what deciding the claim at full would take, where its verdict is inconclusive for a reason
    # more seeds do not fix (an arm that does not fit, no control known): measured steps, seeds or
    # CPU-hours, one or two sentences, shown as the verdict's ``needs``. Not part of the design
    # (``freeze.judge_source`` leaves it out, as it leaves out docstrings)
    to_decide: ClassVar[str] = ""
    # a claim whose arms run at several hyper-parameter draws (labelled ``draw``,
    # ``genlab.claims.search``) names the measure by which each arm's draw is picked per seed
    # (training-domain validation, as DomainBed); the judge reads only the picked runs
    search_on: ClassVar[str | None] = None

    # ---- what a claim is --------------------------------------------------------------------

    @property
    def family(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def rows(self) -> tuple[int, ...]:
        """The catalogue rows of the papers (papers outside the catalogue have none)."""
        return tuple(p.row for p in self.papers if p.row is not None)

    def check_declared(self) -> None:
        """Every claim declares its papers, statement, measures, fit and floor guards and a
        negative control; registration fails otherwise."""
        missing = [
            a
            for a in ("id", "papers", "statement", "Config", "fit", "floor", "scope")
            if not hasattr(self, a)
        ]
        if not self.measures:
            missing.append("measures")
        if "negative" not in self.controls:
            missing.append("controls['negative']")
        if missing:
            raise TypeError(f"claim {type(self).__name__} does not declare {', '.join(missing)}")
        if self.scope not in SCOPES:
            raise TypeError(
                f"claim {self.id}: scope must be one of {', '.join(SCOPES)}, got {self.scope!r}"
            )
        for budget, rule in self.seed_rule.items():
            if rule and self.config(budget).model_dump().get("seeds") != rule.min_seeds:
                raise TypeError(
                    f"claim {self.id}: its {budget} seed rule starts at "
                    f"{rule.min_seeds} seeds, the config's 'seeds'"
                )
        if self.scope != "paper" and not self.scope_note:
            raise TypeError(
                f"claim {self.id}: a {self.scope} says what it scales or reconstructs (scope_note)"
            )
        for g in self.guards(self.config("full")):
            for name in [getattr(g, "measure", None)]:
                if name is not None and name not in self.measures:
                    raise TypeError(
                        f"claim {self.id}: guard {g.kind} reads measure {name!r}, "
                        f"which is not declared ({', '.join(self.measures)})"
                    )

    def rule(self, budget: Budget, control: str | None = None) -> SeedRule | None:
        """The seed rule at ``budget``: the declared one, else ``uniform_rule`` of the config's
        seeds. A control (``control``, run at ``budget``) follows ``uniform_rule`` of its own
        seeds, unless the claim declares none at that budget (issue #36, Dec 4 2026: controls take
        the claims' rule, declared for every claim at once)."""
        if budget in self.seed_rule and (control is None or self.seed_rule[budget] is None):
            return self.seed_rule[budget]
        seeds = self.config(budget, control=control).model_dump().get("seeds")
        return uniform_rule(budget, seeds)

    def config(
        self,
        budget: Budget = "smoke",
        overrides: dict[str, Any] | None = None,
        control: str | None = None,
    ) -> Params:
        """The budget's defaults, then a control's overrides, then ``overrides``, validated."""
        if budget not in self.budgets:
            raise SpecError(f"budget must be one of {', '.join(self.budgets)}, got {budget!r}")
        if control is not None and control not in self.controls:
            raise SpecError(
                f"control must be one of {', '.join(self.controls) or '(none)'}, got {control!r}"
            )
        extra = self.controls[control].overrides if control else {}
        try:
            return self.Config.model_validate(
                {**self.budgets[budget], **extra, **(overrides or {})}
            )
        except ValidationError as exc:
            raise SpecError(format_validation_error(exc, self.Config, prefix="claim.")) from None

    @staticmethod
    def config_id(cfg: Params) -> str:
        text = json.dumps(cfg.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def guards(self, cfg: Params) -> list[Guard]:
        """The declared guards (a claim whose levels depend on ``cfg`` overrides this)."""
        return [self.fit, self.floor, *self.extra_guards]

    def describe(self) -> dict[str, Any]:
        """What ``genlab claims list --json`` and ``claims show`` print."""
        full = self.config("full") if "full" in self.budgets else self.config("smoke")
        return {
            "id": self.id,
            "family": self.family,
            "statement": self.statement,
            "papers": [{"row": p.row, "authors": p.authors, "title": p.title} for p in self.papers],
            "measures": {k: m.describe() for k, m in self.measures.items()},
            "aggregate": self.aggregate,
            "replicates": list(self.replicates),
            "guards": [g.describe() for g in self.guards(full)]
            + [
                {
                    "kind": "power",
                    "rule": "a decision drawn from confidence intervals must agree "
                    "with them; a CI straddling its threshold is inconclusive",
                }
            ],
            "controls": {
                k: {
                    "overrides": c.overrides,
                    "expect": c.expect,
                    "why": c.why,
                    "budget": c.budget,
                    "slow": c.slow,
                    "heavy": c.heavy,
                    **({"open": c.open} if c.open else {}),
                }
                for k, c in self.controls.items()
            },
            "budgets": {k: v for k, v in self.budgets.items()},
            "scope": self.scope,
            "scope_note": self.scope_note,
            "smoke_decides": self.smoke_decides,
        }

    # ---- what a claim implements ------------------------------------------------------------

    def arms(self, cfg: Params) -> list[Arm]:
        """The labelled runs (usually ``Design(...).expand()``)."""
        raise NotImplementedError

    def decide(self, cfg: Params, table: pd.DataFrame) -> Decision:
        """The three-way verdict from the per-run ``table`` (use ``self.summary(table)`` for the
        per-arm aggregate)."""
        raise NotImplementedError

    def synthetic(self, cfg: Params, arm: dict[str, Any], case: Case) -> dict[str, float]:
        """The measures one run of ``arm`` (its labels, replicates included) would give under
        ``case``: ``effect``, the stated effect at its stated size; ``null``, no effect (the arms
        alike where the claim wants them apart, the effect where it wants it absent); ``unfit``, as
        ``effect`` but with an arm the decision reads not fitting its training distribution. What
        ``genlab claims audit`` feeds the judge to show which verdicts it can reach; the base adds
        a small per-run jitter (``synthetic_table``)."""
        raise NotImplementedError(f"claim {self.id} does not describe its synthetic tables")

    # ---- what the base does -----------------------------------------------------------------

    def synthetic_table(self, cfg: Params, case: Case, jitter: float = 0.002) -> pd.DataFrame:
        """The per-run table of ``arms(cfg)`` with ``synthetic`` measures, each finite value
        moved by ``jitter * max(|v|, 1)`` times a standard normal draw (seeded, so the audit is
        repeatable), so that intervals over seeds have a width."""
        rng = np.random.default_rng(0)
        arms = self.arms(cfg)
        table = pd.DataFrame([a.labels for a in arms])
        table["run_id"], table["status"] = [a.spec.run_id for a in arms], "done"
        rows = [self.synthetic(cfg, dict(a.labels), case) for a in arms]
        for m in self.measures:
            v = np.array([float(r[m]) for r in rows])
            z = rng.standard_normal(len(v))
            table[m] = np.where(np.isfinite(v), v + jitter * np.maximum(np.abs(v), 1.0) * z, v)
        return table

    def specs(self, cfg: Params) -> list[RunSpec]:
        return [a.spec for a in self.arms(cfg)]

    def keys(self, table: pd.DataFrame) -> list[str]:
        """The label columns that tell arms apart (every label but the replicates)."""
        skip = {*self.replicates, *self.measures, "run_id", "status", DRAW}
        return [c for c in table.columns if c not in skip]

    def summary(self, table: pd.DataFrame) -> pd.DataFrame:
        """One row per arm: labels, ``n`` and each measure aggregated (``mean`` with ``_lo``/
        ``_hi`` 95% CI columns, or ``max``/``median``) over the replicates."""
        return arm_summary(table, self.keys(table), list(self.measures), self.aggregate)

    def run_table(self, arms: Sequence[Arm], runs: pd.DataFrame, metrics: pd.DataFrame):
        """Per run: arm labels, ``run_id``, ``status`` (from the store) and every measure."""
        ids = [a.spec.run_id for a in arms]
        status = dict(zip(runs["run_id"], runs["status"], strict=True)) if len(runs) else {}
        labels = pd.DataFrame([a.labels for a in arms])
        labels["run_id"], labels["status"] = ids, [status.get(r, "missing") for r in ids]
        # by run id, not by position: two arms may be the same spec (e.g. a control that makes
        # one arm equal another), and measure_table has one row per distinct id
        values = measure_table(self.measures, metrics, ids).loc[ids]
        return pd.concat([labels, values.reset_index(drop=True)], axis=1)

    def judge(self, cfg: Params, runs: pd.DataFrame, metrics: pd.DataFrame) -> ClaimResult:
        """The verdict on the store's ``runs`` rows and long-format ``metrics`` of ``arms(cfg)``."""
        return self.evaluate(cfg, self.run_table(self.arms(cfg), runs, metrics))

    def applicable_controls(self, budget: Budget) -> dict[str, Control]:
        """The controls that license a verdict at ``budget``: those declared at it or a smaller one
        (a full-budget control says nothing of a smoke grid)."""
        within = BUDGETS[: BUDGETS.index(budget) + 1]
        return {n: c for n, c in self.controls.items() if c.budget in within}

    def recorded(
        self, result: ClaimResult, budget: Budget, measured: dict[str, Verdict | None]
    ) -> ClaimResult:
        """The claim's own verdict at ``budget`` as recorded against its papers, licensed by what
        its controls *measured* (``measured``: each applicable control's verdict in the store at
        its current design, ``None`` where it has not run).

        ``reproduced`` stands only when every applicable negative control ran and came out ``not
        reproduced`` (the design can fail); ``not reproduced`` only when every applicable positive
        control ran and came out ``reproduced`` (the design can succeed) and there is one. A smoke
        budget that cannot decide (``smoke_decides``) records what it found as a check that the code
        runs. Otherwise the verdict reads ``inconclusive``, naming the control that is missing, has
        not run, or came out otherwise; the judge's own verdict stays in ``decision``."""
        result.decision, result.scope = result.verdict, self.scope
        controls = self.applicable_controls(budget)
        result.controls = {n: measured.get(n) for n in controls}
        want = {"reproduced": "negative", "not reproduced": "positive"}.get(result.verdict)
        if budget == "smoke" and not self.smoke_decides and want:
            why = (
                "the smoke budget only checks that the code runs (it cannot reach both "
                "decisions); run the full budget"
            )
        elif want:
            names = [n for n, c in controls.items() if c.kind == want]
            not_run = [n for n in names if result.controls[n] is None]
            other = [
                f"{n} came out {result.controls[n]!r}"
                for n in names
                if result.controls[n] not in (None, controls[n].expect)
            ]
            if not names:
                why = (
                    f"no {want} control at the {budget} budget shows that the design could "
                    f"have come out otherwise"
                )
            elif other:
                why = f"the {want} control {'; '.join(other)}, so the design does not isolate the effect"
            elif not_run:
                why = (
                    f"controls not run: {', '.join(not_run)} (`genlab claims run {self.id} "
                    f"--budget {budget}` runs them)"
                )
            else:
                return result
        else:
            return result
        result.guards.append(GuardResult(f"{want} control", False, why))
        result.verdict = "inconclusive"
        result.evidence += f" Inconclusive because {why}."
        return result

    def evaluate(self, cfg: Params, table: pd.DataFrame) -> ClaimResult:
        """Guards, decision and evidence from a per-run table (each arm at its best draw per seed
        where the claim searches hyper-parameters; ``run_ids`` keeps every draw)."""
        run_ids = [r for r in table.get("run_id", [])]
        if self.search_on is not None:
            by = [*self.keys(table), *(r for r in self.replicates if r in table)]
            table = best_draw(table, self.search_on, by)
        summary = self.summary(table)
        keys = self.keys(table)
        decision = self.decide(cfg, table)
        read = summary if decision.reads is None else _matching(summary, decision.reads)
        checks = [g.check(read, keys) for g in self.guards(cfg)]
        checks.append(power_check(decision.verdict, decision.intervals))
        failed = [c for c in checks if not c.ok]
        verdict: Verdict = "inconclusive" if failed else decision.verdict
        notes = [f"{c.kind}: {c.detail}" for c in failed]
        bad_runs = table[~table["status"].isin(["done", "skipped"])]
        if len(bad_runs):
            notes.append(
                f"{len(bad_runs)} of {len(table)} runs are not done "
                f"({', '.join(sorted(set(bad_runs['status'])))})"
            )
        evidence = decision.sentence + (
            f" Inconclusive because {'; '.join(notes)}."
            if failed
            else (f" Note: {notes[0]}." if notes else "")
        )
        stats = {k: float(v) for k, v in decision.stats.items()}
        return ClaimResult(
            self.id,
            verdict,
            stats,
            evidence,
            summary,
            table,
            checks,
            config=cfg.model_dump(mode="json"),
            run_ids=run_ids,
            scope=self.scope,
            decision=verdict,
            intervals=list(decision.intervals),
        )

    def text(self, result: ClaimResult) -> str | None:
        """The result as a text table in the paper's own layout, printed by ``genlab claims run``
        after the evidence (None: the claim has none)."""
        return None

    def draw(self, cfg: Params, result: ClaimResult, metrics: pd.DataFrame, path: Path):
        """The evidence figure at ``path`` (``None`` when the claim draws none)."""
        if self.figure is None or result.runs.empty:
            return None
        title = f"{self.id} \u2014 {result.verdict}"
        return self.figure.draw(result.runs, metrics, path, title, self.keys(result.runs))


def _matching(summary: pd.DataFrame, filters: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """The rows of ``summary`` that match any one of ``filters`` (label -> value or values)."""
    keep = pd.Series(False, index=summary.index)
    for f in filters:
        hit = pd.Series(True, index=summary.index)
        for k, v in f.items():
            hit &= summary[k].isin(list(v) if isinstance(v, list | tuple | set) else [v])
        keep |= hit
    return summary[keep]


__all__ = [
    "BUDGETS",
    "CASES",
    "SCOPES",
    "Budget",
    "Case",
    "Claim",
    "ClaimResult",
    "Control",
    "Decision",
    "NotApplicable",
    "Ref",
    "Scope",
    "Verdict",
]
