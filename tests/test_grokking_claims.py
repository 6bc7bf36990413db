"""The grokking claims' judges on hand-built per-run tables, one test per verdict (their controls
run for real in ``test_claims_controls.py``); the measures they read from the store; the linear
prediction against a direct simulation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from genlab.analysis.linear_theory import predicted_grokking_step
from genlab.claims import CLAIMS
from genlab.claims.grokking.moe_pathways import pathway
from genlab.claims.grokking.semi_grokking import _half_rise, _tail_drift
from genlab.claims.grokking.ungrokking import before_switch
from genlab.errors import SpecError

NAN = math.nan


def claim(name: str):
    return CLAIMS.get(f"grokking.{name}").obj


def verdict(name: str, values, budget: str = "smoke", **overrides) -> str:
    """The verdict on the claim's own arms, each given the measures ``values(labels)`` returns."""
    c = claim(name)
    cfg = c.config(budget, overrides)
    arms = c.arms(cfg)
    table = pd.DataFrame([a.labels for a in arms])
    table["run_id"], table["status"] = [a.spec.run_id for a in arms], "done"
    rows = [values(a.labels) for a in arms]
    for m in c.measures:
        table[m] = [r[m] for r in rows]
    return c.evaluate(cfg, table).verdict


def metrics(points: dict[tuple[str, str], list[tuple[int, float]]]) -> pd.DataFrame:
    rows = [(s, split, m, v) for (split, m), pts in points.items() for s, v in pts]
    return pd.DataFrame(rows, columns=["step", "split", "metric", "value"])


# ---- data_fraction: fractions 0.2 / 0.6 / 0.8 -------------------------------------------------


@pytest.mark.parametrize(
    ("steps", "expect"),
    [
        ({0.2: NAN, 0.6: 1000, 0.8: 400}, "reproduced"),
        ({0.2: NAN, 0.6: 400, 0.8: 1000}, "not reproduced"),  # more steps at a larger fraction
        ({0.2: 1400, 0.6: 1000, 0.8: 400}, "inconclusive"),  # falls, but no fraction fails
    ],
)
def test_data_fraction(steps, expect):
    assert (
        verdict("data_fraction", lambda a: {"t_test": steps[a["fraction"]], "train": 1.0}) == expect
    )


# ---- phases: four cells along weight decay -----------------------------------------------------

CELLS = {0.0: (100, 150), 1.0: (100, 1000), 3.0: (100, NAN), 10.0: (NAN, NAN)}  # c, g, m, confusion


@pytest.mark.parametrize(
    ("cells", "rq", "expect"),
    [
        (CELLS, {0.0: 0.9, 1.0: 0.8, 3.0: 0.2, 10.0: 0.3}, "reproduced"),
        (CELLS, {0.0: 0.9, 1.0: 0.8, 3.0: 0.9, 10.0: 0.95}, "inconclusive"),  # structure everywhere
        (
            {**CELLS, 0.0: (100, NAN), 1.0: (100, NAN)},
            {0.0: 0.2, 1.0: 0.2, 3.0: 0.2, 10.0: 0.3},
            "not reproduced",
        ),  # nothing generalizes
    ],
)
def test_phases(cells, rq, expect):
    def values(a):
        t_train, t_test = cells[a["optimizer.weight_decay"]]
        return {
            "t_train": t_train,
            "t_test": t_test,
            "rq": rq[a["optimizer.weight_decay"]],
            "train": 0.5 if math.isnan(t_train) else 1.0,
        }

    assert verdict("phases", values) == expect


def test_phase_grid_reports_a_non_numeric_axis():
    with pytest.raises(SpecError, match="not a numeric field.*optimizer.lr"):
        claim("phases").arms(claim("phases").config("smoke", {"x": "model.name"}))


# ---- ungrokking: subsets 0.1 / 0.45 of the table -------------------------------------------------


@pytest.mark.parametrize(
    ("final", "at_switch", "expect"),
    [
        ({0.1: 0.02, 0.45: 0.99}, 1.0, "reproduced"),
        ({0.1: 0.95, 0.45: 0.99}, 1.0, "not reproduced"),  # the small subset keeps its accuracy
        ({0.1: 0.02, 0.45: 0.30}, 1.0, "inconclusive"),  # the critical size is not bracketed
        ({0.1: 0.02, 0.45: 0.99}, 0.3, "inconclusive"),  # never grokked before the switch
    ],
)
def test_ungrokking(final, at_switch, expect):
    def values(a):
        return {
            "train_at_switch": 1.0,
            "test_at_switch": at_switch,
            "test": final[a["keep_fraction"]],
        }

    assert verdict("ungrokking", values) == expect


def test_accuracy_before_the_switch_is_read_from_the_logged_train_size():
    m = metrics(
        {
            ("optim", "train_size"): [(100, 300), (200, 300), (300, 160), (400, 50)],
            ("test/heldout", "accuracy"): [(100, 0.5), (200, 0.98), (300, 0.9), (400, 0.1)],
        }
    )
    assert before_switch("test/heldout")(m) == 0.98
    assert math.isnan(before_switch("test/heldout")(m[m["split"] != "optim"]))


# ---- semi_grokking: fractions 0.46 / 0.5 / 0.54 ----------------------------------------------


def semi(test, t_half=3000.0):
    def values(a):
        return {
            "t_train": 200.0,
            "train": 1.0,
            "test": test[a["fraction"]],
            "t_half": t_half,
            "drift": 0.01,
        }

    return values


@pytest.mark.parametrize(
    ("values", "expect"),
    [
        (semi({0.46: 0.02, 0.5: 0.6, 0.54: 1.0}), "reproduced"),
        (semi({0.46: 0.02, 0.5: 1.0, 0.54: 1.0}), "inconclusive"),  # a jump the grid cannot resolve
        (semi({0.46: 0.02, 0.5: 0.6, 0.54: 1.0}, t_half=300.0), "not reproduced"),  # not late
        (semi({0.46: 1.0, 0.5: 1.0, 0.54: 1.0}), "inconclusive"),  # the grid misses the transition
    ],
)
def test_semi_grokking(values, expect):
    assert verdict("semi_grokking", values) == expect


def test_semi_grokking_absence_needs_a_grid_one_pair_fine():
    """At p = 23 one unordered pair is 2 / 529 = 0.0038 of the table: a jump from chance to
    generalizing between fractions that close is all or nothing; 0.005 apart it is not resolved."""
    for step, expect in ((0.0037, "not reproduced"), (0.005, "inconclusive")):
        grid = [0.46, 0.46 + step, 0.54]
        values = semi(dict(zip(grid, (0.02, 1.0, 1.0), strict=True)))
        assert verdict("semi_grokking", values, fractions=grid) == expect


def test_semi_grokking_reads_the_median_seed_not_the_median_of_each_measure():
    """Three seeds at 0.5 (the run found on the fine grid): the median run by final test accuracy
    (0.83) has not settled (drift 0.19); the median drift (0.02) is another run's."""
    runs = {0: (0.02, 0.02), 1: (0.83, 0.19), 2: (0.99, 0.02)}  # seed: (test, drift) at 0.5

    def values(settled_median: bool):
        def row(a):
            test, drift = (
                runs[a["seed"]]
                if a["fraction"] == 0.5
                else ({0.46: 0.02, 0.54: 1.0}[a["fraction"]], 0.01)
            )
            if settled_median and a["fraction"] == 0.5 and a["seed"] == 1:
                drift = 0.01
            return {"t_train": 25.0, "train": 1.0, "test": test, "t_half": 2000.0, "drift": drift}

        return row

    assert verdict("semi_grokking", values(False), seeds=3) == "not reproduced"
    assert verdict("semi_grokking", values(True), seeds=3) == "reproduced"


def test_semi_grokking_measures():
    m = metrics(
        {
            ("test/heldout", "accuracy"): [
                (0, 0.0),
                (1000, 0.1),
                (3000, 0.31),
                (4000, 0.58),
                (5000, 0.6),
                (6000, 0.61),
            ]
        }
    )
    assert _half_rise(m) == 3000 and _tail_drift(m) == pytest.approx(0.01)  # steps >= 4800


# ---- softmax_collapse: softmax / stablemax / perpgrad / adamw_wd ---------------------------------


def collapse(
    stablemax=8000.0,
    perpgrad=200.0,
    wd=1500.0,
    softmax_test=0.03,
    reference=0.99,
    stablemax_seeds=(0, 1, 2),
):
    t90 = {"softmax": NAN, "stablemax": stablemax, "perpgrad": perpgrad, "adamw_wd": wd}

    def values(a):
        t = t90[a["arm"]] if a["arm"] != "stablemax" or a["seed"] in stablemax_seeds else NAN
        test = softmax_test if a["arm"] == "softmax" else 0.95 if t == t else 0.0
        return {
            "t90": t,
            "train": 1.0,
            "collapse": 0.6,
            "logit_norm": 100.0,
            "test": test,
            "best_test": test if a["arm"] != "adamw_wd" else reference,
        }

    return values


@pytest.mark.parametrize(
    ("values", "expect"),
    [
        (collapse(), "reproduced"),
        (collapse(stablemax=NAN), "not reproduced"),  # StableMax never generalizes in its budget
        (collapse(stablemax_seeds=(0, 1)), "inconclusive"),  # two seeds of three: undecided
        (collapse(stablemax_seeds=(0,)), "not reproduced"),
        (collapse(perpgrad=2000.0, wd=500.0), "not reproduced"),  # perpGrad slower
        (collapse(softmax_test=0.9), "not reproduced"),  # softmax generalizes: no stall
        # the weight-decay reference never generalizes: the table is below its critical size
        (collapse(stablemax=NAN, perpgrad=NAN, wd=NAN, reference=0.05), "inconclusive"),
    ],
)
def test_softmax_collapse(values, expect):
    assert verdict("softmax_collapse", values, budget="full") == expect


def test_softmax_collapse_gives_each_arm_its_budget_and_the_negative_control_its_own_runs():
    c = claim("softmax_collapse")
    arms = {a.labels["arm"]: a.spec for a in c.arms(c.config("full")) if a.labels["seed"] == 0}
    assert {a: s.steps for a, s in arms.items()} == {
        "softmax": 80_000,
        "stablemax": 80_000,
        "perpgrad": 3000,
        "adamw_wd": 3000,
    }
    assert not arms["softmax"].stop and all(arms[a].stop for a in ("stablemax", "perpgrad"))
    neg = {a.labels["arm"]: a.spec for a in c.arms(c.config("smoke", control="negative"))}
    assert neg["softmax"].optimizer.weight_decay == 1.0 and "stablemax" not in neg
    assert neg["softmax"].run_id != neg["adamw_wd"].run_id  # not merged with the reference
    # without the StableMax arm the judge reads the two parts it has: softmax generalizing fails
    negative = c.controls["negative"].overrides
    assert verdict("softmax_collapse", collapse(softmax_test=0.9), **negative) == "not reproduced"
    assert verdict("softmax_collapse", collapse(), **negative) == "reproduced"  # it could fail


# ---- linear: d_in 100, ratio 2, weight decay 0 / 0.01, 2 seeds ---------------------------------


@pytest.mark.parametrize(
    ("late", "rises", "expect"),
    [
        ({0.0: 1.05, 0.01: 0.97}, 0.0, "reproduced"),
        ({0.0: 1.3, 0.01: 1.3}, 0.0, "not reproduced"),  # 30% late
        ({0.0: NAN, 0.01: NAN}, 0.0, "not reproduced"),  # never reached 50%
        ({0.0: 1.05, 0.01: 1.05}, 1.0, "not reproduced"),  # the test MSE rose
        ({0.0: 1.05, 0.01: 1.3}, 0.0, "not reproduced"),  # half the runs: at most half pass
    ],
)
def test_linear(late, rises, expect):
    def values(a):
        return {
            "t_meas": 100 * late[a["wd"]],
            "t_pred": 100.0,
            "mse_rises": rises,
            "train_mse": 0.01,
        }

    assert verdict("linear", values) == expect


def test_linear_reads_the_mse_indicator_above_one_half():
    """``mse_rises`` is 0 or 1: a value near 0 (e.g. the audit's jitter) is not a rise, NaN is."""

    def values(rises):
        return lambda a: {"t_meas": 101.0, "t_pred": 100.0, "mse_rises": rises, "train_mse": 0.01}

    assert verdict("linear", values(0.002)) == "reproduced"
    assert verdict("linear", values(NAN)) == "not reproduced"


def test_linear_inconclusive_when_one_run_of_four_misses():
    def values(a):
        miss = a["wd"] == 0.01 and a["seed"] == 1
        return {
            "t_meas": 130.0 if miss else 101.0,
            "t_pred": 100.0,
            "mse_rises": 0.0,
            "train_mse": 0.01,
        }

    assert verdict("linear", values) == "inconclusive"


def test_linear_prediction_matches_direct_gradient_descent() -> None:
    d_in, d_out, ratio, lr, eps = 100, 20, 2.0, 0.1, 0.01
    rng = np.random.default_rng(0)
    n = int(ratio * d_in)
    teacher = rng.normal(size=(d_out, d_in)) / d_in**0.5
    x, xt = rng.normal(size=(n, d_in)), rng.normal(size=(2000, d_in))
    cov, s, t_meas = x.T @ x / n, np.zeros_like(teacher), None
    for t in range(1, 1000):
        s = s - lr * (s - teacher) @ cov
        if (((xt @ (s - teacher).T) ** 2).mean(1) <= eps).mean() >= 0.5:
            t_meas = t
            break
    t_pred = predicted_grokking_step(d_in, d_out, ratio, lr, 0.0, eps)
    assert t_meas is not None and abs(t_meas - t_pred) / t_pred < 0.1


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"ratio": 0.5}, "N > d_in"),
        ({"d_in": 10}, "d_in >= 50"),
        ({"lr": 0.5}, "stable"),
        ({"wd": 1.0}, "never falls"),
    ],
)
def test_linear_prediction_refuses_outside_its_assumptions(kw, match) -> None:
    args = {"d_in": 100, "d_out": 20, "ratio": 2.0, "lr": 0.1, "wd": 0.0, "epsilon": 0.01} | kw
    with pytest.raises(SpecError, match=match):
        predicted_grokking_step(**args)
    with pytest.raises(SpecError, match="claim: lr"):
        claim("linear").arms(claim("linear").config("smoke", {"lr": 0.5}))


# ---- moe_pathways: rule vs random labels, 3 seeds ------------------------------------------------


def moe(rule=(1 / 3, 1 / 3, 1 / 3), random=0.05, best_test=0.95, random_train=1.0):
    """Per seed, the rule run's relative drop (both metrics) and the random-label run's."""

    def values(a):
        is_rule = a["data"] == "rule"
        drop = rule[a["seed"]] if is_rule else random
        out = {
            "train": 1.0 if is_rule else random_train,
            "t_fit": 50.0,
            "test": best_test if is_rule else 0.05,
            "t_grok": 1500.0 if is_rule else NAN,
        }
        for m, start in (("distance", 0.6), ("entropy", 0.9)):
            out |= {
                f"{m}_early": start,
                f"{m}_late": start * (1 - drop),
                f"{m}_rho": -0.8 if is_rule else NAN,
            }
        return out

    return values


@pytest.mark.parametrize(
    ("values", "expect"),
    [
        (moe(), "reproduced"),
        (moe(random=0.3), "not reproduced"),  # the random-label run falls as much: drift
        (moe(rule=(0.05, 0.05, 0.05), random=-0.1), "not reproduced"),  # the rule run barely falls
        (moe(rule=(1 / 3, 1 / 3, 0.0)), "inconclusive"),  # two seeds of three
        (moe(rule=(1 / 3, 0.0, 0.0)), "not reproduced"),
        (moe(random_train=0.6), "inconclusive"),  # the random labels were not memorized
        (moe(best_test=0.5), "inconclusive"),  # the rule run did not grok
    ],
)
def test_moe_pathways(values, expect):
    assert verdict("moe_pathways", values, budget="full") == expect


@pytest.mark.parametrize(
    ("values", "expect"),
    [
        (moe(best_test=0.03), "reproduced"),  # falls more on the rule although nothing generalizes
        (moe(best_test=0.03, random=0.3), "not reproduced"),
        (moe(best_test=0.6), "inconclusive"),  # it generalized: not memorizing
    ],
)
def test_moe_pathways_read_as_memorizing(values, expect):
    """The negative control's reading: the rule run must not generalize; the predicate is the same."""
    assert verdict("moe_pathways", values, reading="memorizing", train_fraction=0.3) == expect


def test_moe_pathway_measures_read_windows_from_train_fit():
    steps = list(range(100, 1100, 100))
    m = metrics(
        {
            ("train/main", "accuracy"): [(s, 0.5 if s < 200 else 1.0) for s in steps],
            ("test/heldout", "accuracy"): [(s, s / 1000) for s in steps],
            ("train/main", "pathway_distance"): [(s, 1 - s / 2000) for s in steps],
        }
    )
    # fit at 200, budget 1000: early [200, 400], late [800, 1000]
    assert pathway("pathway_distance", "early")(m) == pytest.approx(1 - 300 / 2000)
    assert pathway("pathway_distance", "late")(m) == pytest.approx(1 - 900 / 2000)
    assert pathway("pathway_distance", "rho")(m) == pytest.approx(-1.0)
    never = metrics(
        {
            ("train/main", "accuracy"): [(s, 0.5) for s in steps],
            ("train/main", "pathway_distance"): [(s, 0.5) for s in steps],
        }
    )
    assert math.isnan(pathway("pathway_distance", "early")(never))
    late = metrics(
        {
            ("train/main", "accuracy"): [(s, 1.0 if s >= 700 else 0.5) for s in steps],
            ("train/main", "pathway_distance"): [(s, 0.5) for s in steps],
        }
    )
    assert math.isnan(pathway("pathway_distance", "late")(late))  # the windows would meet


# ---- implicit_reasoning: composition / comparison, 2 seeds ---------------------------------------


def implicit(t_id=800.0, ood_comparison=0.95, ood_composition=0.02, t_train=100.0):
    def values(a):
        comp = a["reasoning"] == "composition"
        return {
            "t_train": t_train,
            "train": 1.0,
            "t_id": t_id,
            "id": 0.95,
            "ood": ood_composition if comp else ood_comparison,
        }

    return values


@pytest.mark.parametrize(
    ("values", "expect"),
    [
        (implicit(), "reproduced"),
        (implicit(ood_comparison=0.5), "inconclusive"),  # comparison OOD fails: 3 of 4 parts
        (implicit(t_id=100.0), "not reproduced"),  # no delay: 2 of 4
        (implicit(t_id=NAN, ood_composition=0.9), "not reproduced"),
    ],
)
def test_implicit_reasoning(values, expect):
    assert verdict("implicit_reasoning", values, budget="full") == expect


def test_implicit_reasoning_rejects_a_bad_config():
    with pytest.raises(SpecError, match="claim.phi"):
        claim("implicit_reasoning").config("smoke", {"phi": -1})
