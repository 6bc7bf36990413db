"""The claim layer itself: labelled designs, measures, guards, the base's judgement, and the checks
that hold for every registered claim (declared guards, expanding budgets, an unfit arm is never a
refutation). The controls of every claim run for real in ``test_claims_controls.py``."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from genlab.claims import CLAIMS
from genlab.claims.base import Claim, Control, Decision, Ref
from genlab.claims.guards import Ceiling, Fit, Floor, Interval, NotApplicable, count_verdict
from genlab.claims.measures import AtBest, Extreme, Final, FirstStep
from genlab.design import Design
from genlab.errors import SpecError
from genlab.registry import Params
from genlab.spec import load_spec_file

DECLARATIVE = [e.obj for e in CLAIMS.entries()]


# ---- designs ------------------------------------------------------------------------------------


def test_design_labels_every_arm_and_pairs_data_seeds():
    base = load_spec_file("grokking")
    d = Design(base, axes={"optimizer.lr": [1e-3, 3e-3],
                           "net": {"mlp": {"model": {"name": "mlp"}},
                                   "tf": {"model.n_layers": 1}}}, seeds=2)  # fmt: skip
    arms = d.expand()
    assert len(arms) == 8 and len({a.spec.run_id for a in arms}) == 8
    a = arms[0]
    assert a.labels == {"optimizer.lr": 1e-3, "net": "mlp", "seed": 0, "data_seed": 0}
    assert a.spec.model.name == "mlp" and a.spec.optimizer.lr == 1e-3
    tf = [x for x in arms if x.labels["net"] == "tf"][0]
    assert tf.spec.model.name == "transformer" and tf.spec.model.params["n_layers"] == 1
    assert all(x.spec.data_seed == x.labels["seed"] for x in arms)
    both = (d + Design(base, axes={"optimizer.lr": [1e-3]}, seeds=[5])).expand()
    assert len(both) == 9 and both[-1].labels == {"optimizer.lr": 1e-3, "seed": 5, "data_seed": 5}


def test_design_reports_a_bad_axis_by_its_field():
    with pytest.raises(SpecError, match="optimizer.lr"):
        Design(load_spec_file("grokking"), axes={"optimizer.lr": [-1.0]}).expand()
    with pytest.raises(SpecError, match="axis 'x' is empty"):
        Design(load_spec_file("grokking"), axes={"x": []}).expand()


# ---- measures -----------------------------------------------------------------------------------


def run_metrics(points: dict[str, list[tuple[int, float]]], metric: str = "accuracy"):
    rows = [("r", step, split, metric, v) for split, pts in points.items() for step, v in pts]
    return pd.DataFrame(rows, columns=["run_id", "step", "split", "metric", "value"])


M = run_metrics({
    "train/main": [(0, 0.1), (10, 0.5), (20, 1.0), (30, 1.0)],
    "val/a": [(0, 0.1), (10, 0.6), (20, 0.9), (30, 0.7)],
    "val/b": [(0, 0.1), (10, 0.6), (20, 0.7), (30, 0.9)],
    "test/x": [(0, 0.0), (10, 0.2), (20, 0.4), (30, 0.3)],
})  # fmt: skip


def test_measures_read_one_number_per_run():
    assert Final("test/x")(M) == 0.3
    assert FirstStep("train/main", "accuracy", 0.99)(M) == 20
    assert math.isnan(FirstStep("test/x", "accuracy", 0.99)(M))
    assert FirstStep("test/x", "accuracy", 0.25, below=True)(M) == 10  # step 0 is not counted
    assert Extreme("val/a", "accuracy")(M) == 0.9
    # val/* averages the environments: 0.6, 0.8, 0.8 -> the first best step is 20
    assert AtBest("test/x", select="val/*")(M) == 0.4
    assert AtBest("test/x", select="val/a", mode="min")(M) == 0.2
    assert math.isnan(Final("test/nothing")(M))


# ---- guards -------------------------------------------------------------------------------------


ARMS = pd.DataFrame({"arm": ["a", "b"], "fit": [0.95, 0.675], "ood": [0.01, 0.02]})


def test_fit_floor_and_ceiling_guards_name_what_failed():
    r = Fit("fit", 0.9).check(ARMS, ["arm"])
    assert not r.ok and "arm b did not fit (fit 0.675 < 0.9)" in r.detail
    assert Fit("fit", 0.9, where={"arm": ("a",)}).check(ARMS, ["arm"]).ok
    assert Fit("fit", 0.7, below=True).check(ARMS, ["arm"]).detail.startswith("arm a did not")
    nan = ARMS.assign(fit=[0.95, float("nan")])
    assert not Fit("fit", 0.9).check(nan, ["arm"]).ok  # a diverged arm did not fit
    assert not Floor("ood", 0.05).check(ARMS, ["arm"]).ok
    assert Floor("ood", 0.015).check(ARMS, ["arm"]).ok
    assert not Ceiling("fit", 0.6).check(ARMS, ["arm"]).ok
    assert Ceiling("fit", 0.9).check(ARMS, ["arm"]).ok
    assert NotApplicable("floor", "one arm").check(ARMS, ["arm"]).ok


@pytest.mark.parametrize(
    ("iv", "verdict"),
    [
        (Interval("gain", 0.08, 0.02, 0.14, 5, null=0, smallest=0.05), "reproduced"),
        (Interval("gain", 0.03, 0.01, 0.05, 5, null=0, smallest=0.05), "inconclusive"),
        (Interval("gain", 0.01, -0.02, 0.04, 5, null=0, smallest=0.05), "not reproduced"),
        (Interval("gain", 0.08, -0.02, 0.18, 5, null=0, smallest=0.05), "inconclusive"),
        (
            Interval("drop", -0.1, -0.15, -0.05, 5, null=0, smallest=-0.05, above=False),
            "reproduced",
        ),  # fmt: skip
        (Interval("tau", 0.05, -0.1, 0.2, 40, smallest=0.3, absence=True), "reproduced"),
        (Interval("tau", 0.2, -0.1, 0.5, 16, smallest=0.3, absence=True), "inconclusive"),
        (Interval("tau", 0.6, 0.4, 0.8, 40, smallest=0.3, absence=True), "not reproduced"),
        (Interval("gain", 0.1, float("nan"), float("nan"), 1), "inconclusive"),
    ],
)
def test_an_interval_is_decisive_only_when_its_ci_is(iv, verdict):
    assert iv.verdict() == verdict


def test_count_verdict():
    assert count_verdict(3, 3, min_n=3) == "reproduced"
    assert count_verdict(2, 2, min_n=3) == "inconclusive"
    assert count_verdict(1, 3) == "not reproduced" and count_verdict(2, 3) == "inconclusive"


# ---- the base, on a toy claim -------------------------------------------------------------------


class ToyConfig(Params):
    gain: float = 0.05


class Toy(Claim):
    """A method beats a baseline by ``gain``, judged on a paired-seed interval."""

    id = "toy.gain"
    papers = (Ref(1, "Someone 2024", "A title"),)
    statement = "method beats base by >= gain, CI above 0"
    Config = ToyConfig
    measures = {"val": Final("val/main"), "ood": Final("test/ood")}
    fit = Fit("val", 0.9)
    floor = Floor("ood", 0.1)
    controls = {"negative": Control({"gain": 1.0}, "not reproduced", "a gain nothing reaches")}

    def decide(self, cfg, table):
        wide = table.pivot_table(index="seed", columns="arm", values="ood")
        iv = Interval.of("gain", (wide["method"] - wide["base"]).tolist(), smallest=cfg.gain)
        return Decision(iv.verdict(), {"gain": iv.estimate}, f"gain {iv.text()}.", [iv])


def toy_table(base, method, val=(0.95, 0.95)):
    n = len(base)
    return pd.DataFrame({
        "arm": ["base"] * n + ["method"] * n, "seed": list(range(n)) * 2,
        "run_id": [f"r{i}" for i in range(2 * n)], "status": "done",
        "val": [val[0]] * n + [val[1]] * n, "ood": [*base, *method],
    })  # fmt: skip


def test_the_base_judges_guards_and_writes_the_evidence():
    toy, cfg = Toy(), ToyConfig()
    good = toy.evaluate(cfg, toy_table([0.5, 0.52, 0.48], [0.6, 0.63, 0.59]))
    assert good.verdict == "reproduced" and good.statistic["gain"] == pytest.approx(0.1067, 1e-3)
    assert list(good.table["arm"]) == ["base", "method"] and {"ood_lo", "ood_hi", "n"} <= set(
        good.table.columns)  # fmt: skip
    assert [g.kind for g in good.guards] == ["fit", "floor", "power"]
    assert all(g.ok for g in good.guards)
    unfit = toy.evaluate(cfg, toy_table([0.5, 0.52, 0.48], [0.6, 0.63, 0.59], val=(0.95, 0.675)))
    assert unfit.verdict == "inconclusive"
    assert "arm method did not fit (val 0.675 < 0.9)" in unfit.evidence
    floor = toy.evaluate(cfg, toy_table([0.01, 0.02, 0.0], [0.05, 0.06, 0.04]))
    assert floor.verdict == "inconclusive" and "every arm is at the floor" in floor.evidence
    refuted = toy.evaluate(cfg, toy_table([0.5, 0.52, 0.48], [0.5, 0.51, 0.49]))
    assert refuted.verdict == "not reproduced"


def test_a_decision_that_contradicts_its_interval_is_inconclusive():
    class Overclaims(Toy):
        def decide(self, cfg, table):
            d = super().decide(cfg, table)
            return Decision("reproduced", d.stats, d.sentence, d.intervals)  # ignores the CI

    r = Overclaims().evaluate(ToyConfig(), toy_table([0.5, 0.52, 0.48], [0.5, 0.58, 0.47]))
    assert r.verdict == "inconclusive" and "the intervals do not support 'reproduced'" in r.evidence


def test_a_claim_must_declare_its_guards_and_a_negative_control():
    class NoControl(Toy):
        controls = {}

    with pytest.raises(TypeError, match=r"controls\['negative'\]"):
        NoControl().check_declared()

    class WrongMeasure(Toy):
        fit = Fit("train", 0.9)

    with pytest.raises(TypeError, match="reads measure 'train'"):
        WrongMeasure().check_declared()


# ---- every registered claim ---------------------------------------------------------------------


@pytest.mark.parametrize("claim", DECLARATIVE, ids=lambda c: c.id)
def test_every_claim_describes_itself_and_expands_every_budget(claim):
    d = claim.describe()
    json.dumps(d)  # what `genlab claims list --json` prints
    assert d["papers"] and all(p["title"] and p["authors"] for p in d["papers"])
    assert {g["kind"] for g in d["guards"]} >= {"power"} and len(d["guards"]) >= 3
    for budget in claim.budgets:
        arms = claim.arms(claim.config(budget))
        ids = [a.spec.run_id for a in arms]
        assert arms and len(set(ids)) == len(ids), budget
    for name, control in claim.controls.items():
        claim.arms(claim.config(control.budget, control=name))  # every control's config is valid


@pytest.mark.parametrize("claim", DECLARATIVE, ids=lambda c: c.id)
def test_every_claim_is_inconclusive_when_no_arm_fit(claim):
    """Fed a table where every arm is below its fit level, no claim may refute its paper."""
    cfg = claim.config("smoke")
    arms = claim.arms(cfg)
    table = pd.DataFrame([a.labels for a in arms])
    table["run_id"] = [a.spec.run_id for a in arms]
    table["status"] = "done"
    for name in claim.measures:
        table[name] = 0.5
    fits = [g for g in claim.guards(cfg) if isinstance(g, Fit)]
    assert fits, f"{claim.id} declares no fit guard"
    for g in fits:
        table[g.measure] = g.level * 2 + 1 if g.below else g.level - 0.2
    result = claim.evaluate(cfg, table)
    assert result.verdict == "inconclusive", result.evidence
    assert "did not fit" in result.evidence


@pytest.mark.parametrize(("verdict", "open_", "expect"), [
    ("reproduced", "measured: it reproduces too", "inconclusive"),
    ("reproduced", "", "reproduced"),
    ("not reproduced", "measured: it reproduces too", "not reproduced"),
])  # fmt: skip
def test_a_reproduced_verdict_needs_a_negative_control_that_fails(verdict, open_, expect):
    from genlab.claims.base import ClaimResult

    class Stub(Claim):
        id = "stub.open"
        controls = {"negative": Control({}, "not reproduced", "why", open=open_),
                    "positive": Control({}, "reproduced", "why")}  # fmt: skip

    out = Stub().recorded(ClaimResult("stub.open", verdict, {}, "Evidence."), "smoke")
    assert out.verdict == expect
    assert ("negative control negative does not fail" in out.evidence) == (expect != verdict)


@pytest.mark.parametrize(("control_budget", "budget", "expect"), [
    ("smoke", "smoke", "reproduced"),
    ("smoke", "full", "reproduced"),  # the design fails where it must on a smaller budget
    ("full", "smoke", "inconclusive"),  # a full-budget negative says nothing of smoke
    ("full", "full", "reproduced"),
])  # fmt: skip
def test_a_reproduced_verdict_needs_a_negative_control_at_its_budget(
    control_budget, budget, expect
):
    from genlab.claims.base import ClaimResult

    class Stub(Claim):
        id = "stub.isolated"
        controls = {"negative": Control({}, "not reproduced", "why", budget=control_budget),
                    "positive": Control({}, "reproduced", "why")}  # fmt: skip

    out = Stub().recorded(ClaimResult("stub.isolated", "reproduced", {}, "Evidence."), budget)
    assert out.verdict == expect
    assert ("no negative control shows" in out.evidence) == (expect == "inconclusive")


@pytest.mark.parametrize(("verdict", "expect"), [
    ("not reproduced", "inconclusive"),
    ("reproduced", "reproduced"),
    ("inconclusive", "inconclusive"),
])  # fmt: skip
def test_a_reconstructed_method_cannot_refute_its_paper(verdict, expect):
    from genlab.claims.base import ClaimResult

    class Stub(Claim):
        id = "stub.reconstructed"
        controls = {"negative": Control({}, "not reproduced", "why")}
        reconstruction = "read from the abstract"

    out = Stub().recorded(ClaimResult("stub.reconstructed", verdict, {}, "Evidence."), "smoke")
    assert out.verdict == expect
    assert ("does not refute the paper" in out.evidence) == (verdict == "not reproduced")


@pytest.mark.parametrize(("positive", "control_budget", "budget", "expect"), [
    (None, "smoke", "smoke", "inconclusive"),  # no positive control at all
    ("measured: inconclusive", "smoke", "smoke", "inconclusive"),  # one that does not pass
    ("", "smoke", "smoke", "not reproduced"),
    ("", "smoke", "full", "not reproduced"),  # reachable on a smaller budget
    ("", "full", "smoke", "inconclusive"),  # a full-budget positive says nothing of smoke
    ("", "full", "full", "not reproduced"),
])  # fmt: skip
def test_not_reproduced_needs_a_positive_control_that_passes(
    positive, control_budget, budget, expect
):
    from genlab.claims.base import ClaimResult

    class Stub(Claim):
        id = "stub.reachable"
        controls = {"negative": Control({}, "not reproduced", "why")} | (
            {}
            if positive is None
            else {
                "positive": Control({}, "reproduced", "why", budget=control_budget, open=positive)
            }
        )

    result = ClaimResult("stub.reachable", "not reproduced", {}, "Evidence.")
    out = Stub().recorded(result, budget)
    assert out.verdict == expect
    assert ("no positive control shows" in out.evidence) == (expect == "inconclusive")
