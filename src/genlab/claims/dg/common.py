"""What the domain-shift claims share: DomainBed's training defaults (Adam, lr 1e-3, batch 64 per
training environment, no weight decay; Gulrajani & Lopez-Paz 2021), its training-domain validation
(the held-out accuracy at the step of best mean ``val/*`` accuracy), paired gains over seeds, and
the "a method beats ERM over a suite of held-out environments" design of RIDG and DMG."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar

import pandas as pd
from pydantic import Field, field_validator

from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.guards import Fit, Interval, NotApplicable
from genlab.claims.measures import AtBest
from genlab.claims.search import with_draws
from genlab.datasets.domains import check_test_envs
from genlab.design import Design
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars

DOMAINBED = Ref(None, "Gulrajani & Lopez-Paz 2021", "In search of lost domain generalization")
OPTIM = {"name": "adam", "lr": 1e-3, "weight_decay": 0.0, "betas": [0.9, 0.999]}
HELDOUT = AtBest("test/*")  # training-domain validation (DomainBed's default rule)
VAL = AtBest("val/*")  # the best mean validation accuracy: the in-distribution fit
SMALL_CNN = {"name": "cnn", "params": {"channels": [16, 32], "pool_every": 1}}
MLP = {"name": "mlp", "params": {"width": 256, "depth": 2}}


class DGConfig(Params):
    """Budget and seeds of a DomainBed-style claim."""

    steps: int = Field(301, ge=1)
    eval_every: int = Field(50, ge=1)
    seeds: int = Field(3, ge=2, description="paired arms share each seed's data")


SEARCH_FULL = 4  # draws per arm and seed at the full budget (DomainBed draws 20; fixed Dec 4 2026)


class SearchedConfig(DGConfig):
    """A DomainBed-style claim whose arms are compared each at its best hyper-parameters."""

    search: int = Field(
        1,
        ge=1,
        le=20,
        description="hyper-parameter draws per arm and seed, each arm read at its draw of best "
        "training-domain validation (DomainBed's random search; draw 0 is the arm's defaults, "
        "1 runs the defaults only)",
    )


def searched(controls: dict[str, Control]) -> dict[str, Control]:
    """``controls`` and, for each one at the smoke budget, the same control at the full budget,
    where the arms are searched (``SEARCH_FULL`` draws): what licenses a full verdict then ran
    under the full protocol, the search included."""
    full = {
        f"{name}_full": replace(
            c,
            budget="full",
            slow=True,
            heavy=True,
            open="",
            why=f"{c.why}. Again at the full budget, each arm at its best of the searched draws",
        )
        for name, c in controls.items()
        if c.budget == "smoke"
    }
    return {**controls, **full}


def dg_spec(task: dict[str, Any], model: dict[str, Any], cfg: DGConfig) -> dict[str, Any]:
    """One ERM run with DomainBed's defaults as a spec dict (``Design`` adds the seeds)."""
    return {
        "task": task,
        "model": model,
        "method": {"name": "erm"},
        "optimizer": OPTIM,
        "steps": cfg.steps,
        "batch_size": 64,
        "checkpoint_every": cfg.steps,
        "eval": {"every": cfg.eval_every, "log_points": 0},
    }


def paired_gain(table: pd.DataFrame, arm: str, treat: str, base: str, measure: str = "heldout"):
    """Per seed, ``treat`` minus ``base`` on ``measure``, each averaged first over the other labels
    (a suite's settings)."""
    wide = table.pivot_table(index="seed", columns=arm, values=measure)
    if not {treat, base} <= set(wide.columns):
        return []
    return (wide[treat] - wide[base]).dropna().tolist()


N_ENVS = {"rotated_digits": 6, "colored_digits": 3}
SUITE_SMOKE = ["rotated_digits:0", "rotated_digits:5", "colored_digits:2"]
SUITE_FULL = [f"rotated_digits:{i}" for i in range(6)] + [f"colored_digits:{i}" for i in range(3)]


class SuiteConfig(SearchedConfig):
    """A method against ERM on held-out environments ``task:index``, paired by seed."""

    suite: list[str] = Field(default_factory=lambda: list(SUITE_SMOKE), min_length=1)
    method_params: dict[str, float] = Field(default_factory=dict)
    color_flip: list[float] | None = Field(
        None,
        min_length=3,
        max_length=3,
        description="colored_digits settings: P(color != "
        "label) per env (None: the task's 0.1, 0.2, 0.9)",
    )

    @field_validator("suite")
    @classmethod
    def _suite(cls, v: list[str]) -> list[str]:
        for item in v:
            task, _, idx = item.partition(":")
            if task not in N_ENVS or not idx.isdigit():
                raise ValueError(
                    f"suite entry {item!r} must be task:index with task in {', '.join(N_ENVS)}"
                )
            check_test_envs([int(idx)], N_ENVS[task])
        return v


class BeatsERM(Claim):
    """``METHOD`` against ERM (the core MLP, DomainBed's defaults) over a suite of held-out
    environments of ``rotated_digits`` and ``colored_digits``: the paired gain in suite-average
    held-out accuracy (training-domain validation), with a CI over seeds."""

    METHOD: ClassVar[str]
    METHOD_PARAMS: ClassVar[
        dict[str, Any]
    ] = {}  # the method's fixed params (``method_params`` add)
    Config = SuiteConfig
    budgets = {
        "smoke": {"steps": 301, "seeds": 3},
        "full": {"steps": 1001, "seeds": 3, "suite": SUITE_FULL, "search": SEARCH_FULL},
    }
    search_on = "val"
    MIN_GAIN = 0.01  # fixed before running: a gain below one point is parity
    measures = {"heldout": HELDOUT, "val": VAL}
    fit = Fit("val", 0.6)
    floor = NotApplicable(
        "floor",
        "the suite's chance levels differ (0.5 colored, 0.1 rotated) "
        "and colored -90% sits below chance by design; every arm must fit (val) "
        "and the paired gain's CI decides",
    )
    figure = ArmBars("heldout", by=("setting", "method"))
    controls = searched(
        {
            "negative": Control(
                {"suite": ["colored_digits:2"], "color_flip": [0.1, 0.1, 0.9]},
                "not reproduced",
                "-90% held out after two training environments in which color agrees with the label "
                "alike (90% in both, where the claim's are 90% and 80%): nothing in the sources tells "
                "the color from a real cue, so a method that learns what the source domains share (or, "
                "RIDG, what each class's mean rationale holds) keeps the color as ERM does, and both "
                "collapse below chance on the reversed environment. Its own runs (the claim's suite "
                "holds -90% with the 90%/80% sources); until Dec 3 2026 the control was the claim's "
                "own colored_digits:2 runs judged again. Measured Dec 3 2026 at smoke (6 runs, ~15 s "
                "each for DMG and RIDG, the ERM runs shared): not reproduced for both, method and ERM "
                "alike at held-out 0.104 with val 0.894 (a colour-only classifier), gain 0.000 [0.000, "
                "0.000]",
                slow=True,
            )
        }
    )

    def arms(self, cfg: SuiteConfig):
        def task(s: str) -> dict[str, Any]:
            name, _, idx = s.partition(":")
            params: dict[str, Any] = {"test_envs": [int(idx)]}
            if cfg.color_flip is not None and name == "colored_digits":
                params["color_flip"] = cfg.color_flip
            return {"name": name, "params": params}

        settings = {s: {"task": task(s)} for s in cfg.suite}
        methods = {
            "erm": {"method": {"name": "erm"}},
            self.METHOD: {
                "method": {
                    "name": self.METHOD,
                    "params": {**self.METHOD_PARAMS, **cfg.method_params},
                }
            },
        }
        base = dg_spec({"name": "colored_digits"}, MLP, cfg)
        design = Design(base, {"setting": settings, "method": methods}, seeds=cfg.seeds)
        return with_draws(design.expand(), cfg.search)

    def synthetic(self, cfg: SuiteConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: the method gains 0.05 on every held-out setting; null: no gain; unfit: the
        method's arms stop at val 0.5."""
        method = arm["method"] == self.METHOD
        gain = 0.05 * method if case != "null" else 0.0
        return {"heldout": 0.6 + gain, "val": 0.5 if case == "unfit" and method else 0.9}

    def decide(self, cfg: SuiteConfig, table: pd.DataFrame) -> Decision:
        m = self.METHOD
        iv = Interval.of(
            f"{m} - ERM", paired_gain(table, "method", m, "erm"), null=0.0, smallest=self.MIN_GAIN
        )
        per = table.pivot_table(index="setting", columns="method", values="heldout")
        stats = {
            "gain_mean": iv.estimate,
            "gain_ci_lo": iv.lo,
            "gain_ci_hi": iv.hi,
            f"{m}_mean": per[m].mean(),
            "erm_mean": per["erm"].mean(),
            f"{m}_worst_setting": per[m].min(),
            "erm_worst_setting": per["erm"].min(),
        }
        gains = ", ".join(f"{s} {v:+.3f}" for s, v in (per[m] - per["erm"]).items())
        return Decision(
            iv.verdict(),
            stats,
            f"Suite-average held-out accuracy {m} "
            f"{stats[f'{m}_mean']:.3f} vs ERM {stats['erm_mean']:.3f}; paired gain "
            f"{iv.text()}; per setting: {gains}; {cfg.steps} steps.",
            [iv],
        )
