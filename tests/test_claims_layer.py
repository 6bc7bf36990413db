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
    d = Design(
        base,
        axes={
            "optimizer.lr": [1e-3, 3e-3],
            "net": {"mlp": {"model": {"name": "mlp"}}, "tf": {"model.n_layers": 1}},
        },
        seeds=2,
    )
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


M = run_metrics(
    {
        "train/main": [(0, 0.1), (10, 0.5), (20, 1.0), (30, 1.0)],
        "val/a": [(0, 0.1), (10, 0.6), (20, 0.9), (30, 0.7)],
        "val/b": [(0, 0.1), (10, 0.6), (20, 0.7), (30, 0.9)],
        "test/x": [(0, 0.0), (10, 0.2), (20, 0.4), (30, 0.3)],
    }
)


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
        ),
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
    scope = "paper"
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
    return pd.DataFrame(
        {
            "arm": ["base"] * n + ["method"] * n,
            "seed": list(range(n)) * 2,
            "run_id": [f"r{i}" for i in range(2 * n)],
            "status": "done",
            "val": [val[0]] * n + [val[1]] * n,
            "ood": [*base, *method],
        }
    )


def test_the_base_judges_guards_and_writes_the_evidence():
    toy, cfg = Toy(), ToyConfig()
    good = toy.evaluate(cfg, toy_table([0.5, 0.52, 0.48], [0.6, 0.63, 0.59]))
    assert good.verdict == "reproduced" and good.statistic["gain"] == pytest.approx(0.1067, 1e-3)
    assert list(good.table["arm"]) == ["base", "method"] and {"ood_lo", "ood_hi", "n"} <= set(
        good.table.columns
    )
    assert [g.kind for g in good.guards] == ["fit", "floor", "power"]
    assert all(g.ok for g in good.guards)
    unfit = toy.evaluate(cfg, toy_table([0.5, 0.52, 0.48], [0.6, 0.63, 0.59], val=(0.95, 0.675)))
    assert unfit.verdict == "inconclusive"
    assert "arm method did not fit (val 0.675 < 0.9)" in unfit.evidence
    floor = toy.evaluate(cfg, toy_table([0.01, 0.02, 0.0], [0.05, 0.06, 0.04]))
    assert floor.verdict == "inconclusive" and "every arm is at the floor" in floor.evidence
    refuted = toy.evaluate(cfg, toy_table([0.5, 0.52, 0.48], [0.5, 0.51, 0.49]))
    assert refuted.verdict == "not reproduced"


def test_guards_judge_the_arms_a_decision_reads():
    """A refutation drawn from arms that fit stands when an arm it did not read failed to fit."""

    class ReadsTwo(Toy):
        def decide(self, cfg, table):
            d = super().decide(cfg, table.query("arm != 'extra'"))
            return Decision(
                d.verdict, d.stats, d.sentence, d.intervals, reads=[{"arm": ["base", "method"]}]
            )

    table = toy_table([0.5, 0.52, 0.48], [0.5, 0.51, 0.49])
    extra = table[table["arm"] == "base"].assign(arm="extra", val=0.3, run_id=["x0", "x1", "x2"])
    table = pd.concat([table, extra], ignore_index=True)
    assert ReadsTwo().evaluate(ToyConfig(), table).verdict == "not reproduced"
    assert Toy().evaluate(ToyConfig(), table.query("arm != 'extra'")).verdict == "not reproduced"
    unread = table.assign(val=[0.95] * 3 + [0.5] * 3 + [0.95] * 3)  # a read arm does not fit
    assert ReadsTwo().evaluate(ToyConfig(), unread).verdict == "inconclusive"


def test_the_audit_rejects_controls_that_cannot_fail(monkeypatch):
    """A negative control that re-judges the claim's runs (and whose fit guard caps any gain
    below the threshold) and a positive control equal to the claim are named as problems."""
    from genlab.claims.audit import audit_claim

    claim = CLAIMS.get("comp.coverage_not_scale").obj
    monkeypatch.setattr(
        type(claim),
        "controls",
        {
            "negative": Control(
                {"on": "val"}, "not reproduced", "trained combinations", budget="full"
            ),
            "positive": Control({}, "reproduced", "the claim itself", budget="full"),
        },
    )
    problems = audit_claim(claim)["problems"]
    assert "negative control negative trains no run of its own" in problems
    assert any(p.startswith("negative control negative cannot come out") for p in problems)
    assert "positive control positive is the claim's own configuration" in problems
    monkeypatch.setattr(type(claim), "controls", {})
    assert "no negative control" in audit_claim(claim)["problems"]


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


def _stub(controls: dict, scope: str = "paper", smoke_decides: bool = True):
    class Stub(Claim):
        id = "stub.licensed"

    Stub.controls, Stub.scope, Stub.smoke_decides = controls, scope, smoke_decides
    return Stub()


NEG = Control({"x": 1}, "not reproduced", "why")
POS = Control({"x": 2}, "reproduced", "why")


@pytest.mark.parametrize(
    ("verdict", "measured", "expect", "says"),
    [
        ("reproduced", {"negative": "not reproduced"}, "reproduced", ""),
        (
            "reproduced",
            {"negative": "reproduced"},
            "inconclusive",
            "negative came out 'reproduced'",
        ),
        ("reproduced", {"negative": "inconclusive"}, "inconclusive", "came out 'inconclusive'"),
        ("reproduced", {"negative": None}, "inconclusive", "controls not run: negative"),
        ("reproduced", {}, "inconclusive", "controls not run: negative"),
        (
            "not reproduced",
            {"negative": "reproduced", "positive": "reproduced"},
            "not reproduced",
            "",
        ),
        ("not reproduced", {"positive": None}, "inconclusive", "controls not run: positive"),
        ("not reproduced", {"positive": "inconclusive"}, "inconclusive", "positive came out"),
        ("inconclusive", {}, "inconclusive", ""),
    ],
)
def test_a_verdict_is_licensed_by_what_its_controls_measured(verdict, measured, expect, says):
    """``reproduced`` needs the negative control measured ``not reproduced``; ``not reproduced``
    a positive control measured ``reproduced``; a control not run is named, and a hand-set
    ``open`` note is not read at all."""
    from genlab.claims.base import ClaimResult

    stub = _stub({"negative": NEG, "positive": POS})
    out = stub.recorded(ClaimResult("stub.licensed", verdict, {}, "Evidence."), "smoke", measured)
    assert out.verdict == expect and out.decision == verdict
    assert says in out.evidence
    assert out.controls == {
        "negative": measured.get("negative"),
        "positive": measured.get("positive"),
    }


def test_an_open_note_is_history_not_a_verdict_input():
    from dataclasses import replace

    from genlab.claims.base import ClaimResult

    stub = _stub({"negative": replace(NEG, open="once measured: it reproduced too")})
    out = stub.recorded(
        ClaimResult("stub.licensed", "reproduced", {}, "E."),
        "smoke",
        {"negative": "not reproduced"},
    )
    assert out.verdict == "reproduced"


@pytest.mark.parametrize(
    ("control_budget", "budget", "expect"),
    [
        ("smoke", "smoke", "reproduced"),
        ("smoke", "full", "reproduced"),  # the design fails where it must on a smaller budget
        ("full", "smoke", "inconclusive"),  # a full-budget negative says nothing of smoke
        ("full", "full", "reproduced"),
    ],
)
def test_a_control_licenses_its_budget_and_larger_ones(control_budget, budget, expect):
    from dataclasses import replace

    from genlab.claims.base import ClaimResult

    stub = _stub({"negative": replace(NEG, budget=control_budget)})
    measured = (
        {"negative": "not reproduced"} if control_budget == "smoke" or budget == "full" else {}
    )
    out = stub.recorded(ClaimResult("stub.licensed", "reproduced", {}, "E."), budget, measured)
    assert out.verdict == expect
    assert ("no negative control at the smoke budget" in out.evidence) == (expect != "reproduced")


@pytest.mark.parametrize("verdict", ["reproduced", "not reproduced"])
def test_a_smoke_test_only_checks_that_the_code_runs(verdict):
    from genlab.claims.base import ClaimResult

    stub = _stub({"negative": NEG, "positive": POS}, smoke_decides=False)
    ok = {"negative": "not reproduced", "positive": "reproduced"}
    out = stub.recorded(ClaimResult("stub.licensed", verdict, {}, "E."), "smoke", ok)
    assert out.verdict == "inconclusive" and "only checks that the code runs" in out.evidence
    out = stub.recorded(ClaimResult("stub.licensed", verdict, {}, "E."), "full", ok)
    assert out.verdict == verdict


def test_a_reconstruction_decides_about_its_reading():
    """A reconstruction's 'not reproduced' stands (it is reported with its scope), where it used to
    be relabelled inconclusive."""
    from genlab.claims.base import ClaimResult

    stub = _stub({"negative": NEG, "positive": POS}, scope="reconstruction")
    out = stub.recorded(
        ClaimResult("stub.licensed", "not reproduced", {}, "E."),
        "smoke",
        {"negative": "not reproduced", "positive": "reproduced"},
    )
    assert out.verdict == "not reproduced" and out.scope == "reconstruction"


def test_a_sequential_seed_rule_adds_seeds_until_the_judge_decides(tmp_path, monkeypatch):
    """Looks at 2 and 4 seeds: the first look's interval (spending part of alpha) straddles, the
    second decides; the recorded configuration has 4 seeds and the extras name the look."""
    from genlab.analysis.sequential import SeedRule
    from genlab.claims import runner
    from genlab.claims.guards import CONFIDENCE
    from genlab.store import Store

    seen = []

    class Seq(Toy):
        seed_rule = {"smoke": SeedRule(2, 4, 2)}

        def arms(self, cfg):
            return [
                a
                for s in range(cfg.seeds)
                for a in Design(
                    {
                        "task": {"name": "modular_arithmetic", "params": {"p": 7}},
                        "model": {"name": "mlp"},
                        "steps": 1,
                    },
                    rows=[({"arm": "base"}, {}), ({"arm": "method"}, {})],
                    seeds=[s],
                ).expand()
            ]

        def judge(self, cfg, runs, metrics):
            seen.append((cfg.seeds, CONFIDENCE.get()))
            gains = [0.1, 0.3, 0.2, 0.21][: cfg.seeds]
            return self.evaluate(cfg, toy_table([0.5] * cfg.seeds, [0.5 + g for g in gains]))

    class SeqConfig(ToyConfig):
        seeds: int = 2

    Seq.Config = SeqConfig
    monkeypatch.setattr(runner, "measured_controls", lambda *a: {"negative": "not reproduced"})
    result = runner.run_claim(
        Seq(), Store(tmp_path), "smoke", execute=lambda *a: None, controls=False
    )
    rule = Seq.seed_rule["smoke"]
    assert seen == [(2, rule.confidence(2)), (4, rule.confidence(4))]
    assert rule.confidence(2) == pytest.approx(1 - 0.05 * 2 / 4)
    assert result.verdict == "reproduced" and result.config["seeds"] == 4


def test_a_control_follows_the_uniform_seed_rule_and_is_found_by_its_design(tmp_path):
    """A full-budget control over 2 seeds whose first look straddles is read again at 4 seeds; its
    verdict is recorded under its declared configuration, where ``measured_controls`` finds it."""
    from genlab.claims import runner
    from genlab.claims.base import uniform_rule
    from genlab.store import Store

    seen = []

    class SeqConfig(ToyConfig):
        seeds: int = 2

    class Seq(Toy):
        Config = SeqConfig
        budgets = {"smoke": {}, "full": {}}
        controls = {"negative": Control({"gain": 0.5}, "not reproduced", "too big", "full")}

        def arms(self, cfg):
            return Design(
                {
                    "task": {"name": "modular_arithmetic", "params": {"p": 7}},
                    "model": {"name": "mlp"},
                    "steps": 1,
                },
                rows=[({"arm": "base"}, {}), ({"arm": "method"}, {})],
                seeds=list(range(cfg.seeds)),
            ).expand()

        def judge(self, cfg, runs, metrics):
            seen.append(cfg.seeds)
            gains = [0.1, 0.3, 0.1, 0.1][: cfg.seeds]  # straddles 0.5 at 2 seeds, below at 4
            return self.evaluate(cfg, toy_table([0.5] * cfg.seeds, [0.5 + g for g in gains]))

    seq, store = Seq(), Store(tmp_path)
    assert seq.rule("full", "negative") == uniform_rule("full", 2) and seq.rule("full") is not None
    out = runner.run_claim(seq, store, "full", execute=lambda *a: None, control="negative")
    assert seen == [2, 4] and out.verdict == "not reproduced"
    assert runner.measured_controls(seq, store, "full") == {"negative": "not reproduced"}


def test_the_uniform_seed_rule_reads_n_then_2n_at_full_only():
    from genlab.analysis.sequential import SeedRule
    from genlab.claims.base import uniform_rule

    assert uniform_rule("full", 5) == SeedRule(5, 10, 5) and SeedRule(5, 10, 5).looks() == [5, 10]
    assert uniform_rule("smoke", 5) is None and uniform_rule("full", 1) is None
    assert uniform_rule("full", None) is None
    for e in CLAIMS.entries():  # every claim replicating over seeds at full declares it
        n = e.obj.config("full").model_dump().get("seeds")
        assert e.obj.rule("full") == (
            SeedRule(n, 2 * n, n) if isinstance(n, int) and n >= 2 else None
        )


def test_more_seeds_only_while_an_interval_straddles_and_every_arm_fits():
    from genlab.claims.runner import straddles

    toy, cfg = Toy(), ToyConfig()
    wide = toy_table([0.5, 0.5], [0.6, 0.8])  # gain CI straddles 0 on two seeds
    assert straddles(toy.evaluate(cfg, wide))
    unfit = toy_table([0.5, 0.5], [0.6, 0.8], val=(0.95, 0.5))  # and the method did not fit
    assert toy.evaluate(cfg, unfit).verdict == "inconclusive"
    assert not straddles(toy.evaluate(cfg, unfit))
    assert not straddles(toy.evaluate(cfg, toy_table([0.5, 0.52, 0.48], [0.6, 0.63, 0.59])))


def test_more_seeds_only_for_intervals_the_seeds_add_units_to():
    """length.nope's intervals are over ranked task x length cells, as many at 2 seeds as at 4, so
    a second look cannot narrow them and the rule stops; an interval over seeds grows."""
    from genlab.claims.base import ClaimResult
    from genlab.claims.runner import fixed_units, more_seeds

    nope = CLAIMS.get("length.nope").obj
    two, four = (nope.config("full", {"seeds": n}) for n in (2, 4))
    fixed = fixed_units(nope, two, four)
    assert fixed and all(name.startswith("RR(") for name in fixed)

    def straddling(name):
        iv = Interval(name, 0.0, -0.5, 0.5, 6, smallest=0.1)
        return ClaimResult(nope.id, "inconclusive", {}, "E.", intervals=[iv])

    assert not more_seeds(nope, straddling(sorted(fixed)[0]), two, four)
    assert more_seeds(nope, straddling("an interval over seeds"), two, four)
    assert not more_seeds(nope, straddling("an interval over seeds"), two, None)
    seeds = CLAIMS.get("regime.updates_not_batch").obj
    n = seeds.rule("full").min_seeds
    assert fixed_units(seeds, *(seeds.config("full", {"seeds": k}) for k in (n, 2 * n))) == set()


def test_licensable_decisions_follow_the_declared_controls():
    from dataclasses import replace

    from genlab.claims.audit import licensable

    assert licensable(_stub({"negative": NEG, "positive": POS}), "smoke") == [
        "reproduced",
        "not reproduced",
    ]
    assert licensable(_stub({"negative": NEG}), "smoke") == ["reproduced"]
    known_to_fail = replace(NEG, open="measured: reproduced too")
    assert licensable(_stub({"negative": known_to_fail, "positive": POS}), "smoke") == [
        "not reproduced"
    ]
    assert licensable(_stub({"negative": replace(NEG, budget="full")}), "smoke") == []
