"""DomainBed's protocol in sweeps and selection: per-method draws per trial with the defaults as
draw 0 (``[random]`` switches of ``genlab.sweep.spec``), the held-out environment split 20/80 for
the test-domain oracle (``test_holdout``), leave-one-domain-out in the DomainBed report, and the
run ids of earlier presets and sweeps left unchanged. No training."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest
import torch

from genlab.analysis.selection import oracle
from genlab.datasets.domains import OUT_SUFFIX
from genlab.errors import SpecError
from genlab.methods.dg_groupdro import GroupDRO
from genlab.methods.dg_irm import IRM
from genlab.report.document import Report
from genlab.report.sweep_report import add_domainbed_tables, select_rules
from genlab.spec import load_spec_file, parse_spec
from genlab.sweep.spec import load_sweep, parse_sweep
from genlab.tasks import TASKS

ROOT = Path(__file__).resolve().parents[1]

SWEEP = {
    "name": "db",
    "base": "dg-colored",
    "set": ["steps=11"],
    "seeds": 2,
    "grid": {
        "method": [
            {"name": "erm"},
            {"name": "irm", "params": {"irm_penalty_anneal_iters": 30}},
            {"name": "groupdro"},
        ]
    },
    "random": {
        "trials": 4,
        "method_ranges": True,
        "per_trial": True,
        "default_draw": True,
        "optimizer.lr": {"log_uniform": [3.1623e-5, 3.1623e-3]},
        "batch_size": {"choice": [8, 16, 32, 64, 128, 256]},
    },
}


def _runs(data: dict) -> list[tuple[dict, object]]:
    return parse_sweep(data).expand(ROOT)


def test_draw_zero_is_the_default_configuration_in_every_trial():
    runs = _runs(SWEEP)
    assert len(runs) == 3 * 4 * 2  # methods x draws x trials
    base = parse_spec(load_spec_file("dg-colored"))
    zero = [(lab, s) for lab, s in runs if lab["draw"] == 0]
    assert len(zero) == 3 * 2
    for _lab, s in zero:
        assert s.optimizer.lr == base.optimizer.lr == 1e-3 and s.batch_size == 64
        if s.method.name == "irm":
            assert s.method.params == {"irm_lambda": 100.0, "irm_penalty_anneal_iters": 30}
        if s.method.name == "groupdro":
            assert s.method.params == {"groupdro_eta": 0.01}


def test_each_method_draws_its_own_ranges_fresh_per_trial():
    runs = _runs(SWEEP)
    drawn = [(lab, s) for lab, s in runs if lab["draw"] > 0]
    by = {(s.method.name, lab["seed"], lab["draw"]): s for lab, s in drawn}
    for (method, _seed, _draw), s in by.items():
        ranges = {"irm": IRM.RANGES, "groupdro": GroupDRO.RANGES}.get(method, {})
        for name, (kind, lo, hi) in ranges.items():
            if name == "irm_penalty_anneal_iters":  # fixed by the grid entry: not drawn
                assert s.method.params[name] == 30
                continue
            assert kind == "log10" and 10**lo <= s.method.params[name] <= 10**hi
    # a shared axis takes one value per trial and draw for every method (DomainBed seeds each
    # hyperparameter by its name); the methods' own draws differ from trial to trial
    for seed in (0, 1):
        for d in (1, 2, 3):
            assert len({by[(m, seed, d)].optimizer.lr for m in ("erm", "irm", "groupdro")}) == 1
    lams = {
        (sd, d): by[("irm", sd, d)].method.params["irm_lambda"] for sd in (0, 1) for d in (1, 2)
    }
    assert len(set(lams.values())) == 4
    assert by[("erm", 0, 1)].optimizer.lr != by[("erm", 1, 1)].optimizer.lr
    # reproducible
    again = {s.run_id for _, s in _runs(SWEEP)}
    assert again == {s.run_id for _, s in runs}


def test_shared_draws_without_per_trial():
    data = {**SWEEP, "random": {k: v for k, v in SWEEP["random"].items() if k != "per_trial"}}
    runs = _runs(data)
    by = {(s.method.name, lab["seed"], lab["draw"]): s for lab, s in runs}
    assert by[("irm", 0, 2)].method.params == by[("irm", 1, 2)].method.params
    assert by[("irm", 0, 2)].optimizer.lr == by[("irm", 1, 2)].optimizer.lr


def test_switches_need_something_to_draw_and_stay_out_of_old_sweep_ids():
    with pytest.raises(SpecError, match="per_trial"):
        parse_sweep({"base": "dg-colored", "random": {"per_trial": True}})
    only_ranges = parse_sweep(
        {"base": "dg-colored", "grid": {"method.name": ["irm"]}, "random": {"method_ranges": True}}
    )
    (lab, s), *_ = only_ranges.expand(ROOT)
    assert set(s.method.params) == {"irm_lambda", "irm_penalty_anneal_iters"}
    plain = parse_sweep({"base": "dg-colored", "random": {"optimizer.lr": {"uniform": [0.1, 1]}}})
    assert not {"method_ranges", "per_trial", "default_draw"} & set(plain.model_dump())


def _digest(ids: list[str]) -> str:
    return hashlib.sha256(",".join(sorted(ids)).encode()).hexdigest()[:16]


@pytest.mark.parametrize(
    ("file", "sweep_id", "digest"),
    [  # recorded before the DomainBed switches and test_holdout existed
        ("methods.toml", "e1b0f0e16e84", "13d63c8b3471df80"),
        ("random_search.toml", "bf26653fc2a7", "5cb6a38748335c08"),
        ("grokking_seeds.toml", "6a7c4479f4a7", "40b41082eb2d391e"),
    ],
)
def test_existing_sweeps_keep_their_ids(file, sweep_id, digest):
    sw, folder = load_sweep(ROOT / "examples/sweeps" / file)
    assert sw.sweep_id == sweep_id
    assert _digest([s.run_id for _, s in sw.expand(folder)]) == digest


def test_presets_keep_their_ids():
    assert parse_spec(load_spec_file("dg-colored")).run_id == "f20c5267e2137912"
    old_grid = {  # the former DomainBed grid's run ids (colored and rotated, no test_holdout)
        "base": "dg-colored",
        "set": ["steps=301", "eval.every=50", "checkpoint_every=301"],
        "grid": {"task": [{"name": "rotated_digits", "params": {"test_envs": [3]}}]},
    }
    ((_, s),) = parse_sweep(old_grid).expand(ROOT)
    assert "test_holdout" not in s.task.params


def test_example_sweep_is_domainbeds_protocol():
    sw, folder = load_sweep(ROOT / "examples/sweeps/domainbed_digits.toml")
    assert sw.method_ranges and sw.per_trial and sw.default_draw and sw.trials == 20
    runs = sw.expand(folder)
    assert len(runs) == 4 * 3 * 20 * 3
    assert all(s.task.params["test_holdout"] for _, s in runs)


@pytest.mark.parametrize("task", ["colored_digits", "rotated_digits"])
def test_test_holdout_splits_the_held_out_env_20_80(task):
    whole = TASKS.get(task).obj(TASKS.params(task, {"test_envs": [1]}, "t"), 3)
    split = TASKS.get(task).obj(
        TASKS.params(task, {"test_envs": [1], "test_holdout": True}, "t"), 3
    )
    env = whole.info.extra["test_envs"][0]
    assert list(whole.test) == [env]
    assert list(split.test) == [env, env + OUT_SUFFIX]
    n = len(whole.test[env].y)
    n_in, n_out = len(split.test[env].y), len(split.test[env + OUT_SUFFIX].y)
    assert n_in + n_out == n and n_out == round(0.2 * n)
    rows = lambda s: {tuple(r) for r in s.x.flatten(1).tolist()}  # noqa: E731
    both = torch.cat([split.test[env].x, split.test[env + OUT_SUFFIX].x])
    assert rows(split.test[env]).isdisjoint(rows(split.test[env + OUT_SUFFIX])) or n_in == 0
    assert sorted(both.flatten(1).tolist()) == sorted(whole.test[env].x.flatten(1).tolist())
    assert set(split.train) == set(whole.train)


def test_oracle_selects_on_the_20_percent_and_reports_the_80():
    rec = pd.DataFrame(
        {
            "method": ["m", "m"],
            "seed": [0, 0],
            "config": ["A", "B"],
            "test": [0.70, 0.60],  # the 80% in split
            "test_out": [0.50, 0.90],  # the 20% out split: B is chosen
        }
    )
    assert oracle(rec, "test")["config"].tolist() == ["A"]  # on the reported score itself
    sel = oracle(rec, "test", val="test_out")
    assert sel["config"].tolist() == ["B"] and sel["test"].tolist() == [0.60]
    assert sel["val"].tolist() == [0.90]


def _rec(rows: list[tuple], n_train: int = 2) -> pd.DataFrame:
    cols = ["task", "method", "config", "held_out", "setting", "trial", "step", "val", "test"]
    rec = pd.DataFrame(rows, columns=cols)
    return rec.assign(test_out=rec["test"] - 0.1, n_train=n_train)


def test_report_oracle_uses_the_out_split():
    rec = _rec(
        [
            ("T", "m", "A", "e0", "test_envs=[0]", "0/0", 50, 0.9, 0.60),
            ("T", "m", "B", "e0", "test_envs=[0]", "0/0", 50, 0.8, 0.70),
        ]
    )
    rec.loc[rec["config"] == "A", "test_out"] = 0.95  # the 20% prefers A, the 80% B
    sel = select_rules(rec)
    assert "oracle" in sel and sel["oracle"]["config"].tolist() == ["A"]
    assert sel["oracle"]["test"].tolist() == [0.60]
    whole = select_rules(rec.assign(test_out=float("nan")))
    assert whole["oracle"]["config"].tolist() == ["B"]


def _env_rows(rows: list[tuple]) -> pd.DataFrame:
    cols = ["task", "method", "config", "held_out", "trial", "step", "env", "value"]
    return pd.DataFrame(rows, columns=cols)


def test_leave_one_domain_out_in_the_report():
    # three domains e0, e1, e2; setting {e0} trains on e1, e2; runs {e0, e1} and {e0, e2} score
    # e1 and e2. Config A validates better (mean 0.8 vs 0.5 at step 100); B at step 50 is worse.
    full = [
        ("T", "m", c, "e0", "test_envs=[0]", "0/0", st, 0.9, t)
        for c, st, t in [("A", 50, 0.40), ("A", 100, 0.45), ("B", 50, 0.70), ("B", 100, 0.75)]
    ]
    pairs = []
    for c, st, s1, s2 in [
        ("A", 50, 0.6, 0.6),
        ("A", 100, 0.8, 0.8),
        ("B", 50, 0.5, 0.5),
        ("B", 100, 0.5, 0.5),
    ]:
        pairs += [
            ("T", "m", c, "e0, e1", "0/0", st, "e1", s1),
            ("T", "m", c, "e0, e1", "0/0", st, "e0", 0.1),
            ("T", "m", c, "e0, e2", "0/0", st, "e2", s2),
            ("T", "m", c, "e0, e2", "0/0", st, "e0", 0.1),
        ]
    pair_rec = [
        ("T", "m", c, h, "x", "0/0", st, 0.9, 0.1)
        for c in "AB"
        for h in ("e0, e1", "e0, e2")
        for st in (50, 100)
    ]
    rec, env = _rec(full + pair_rec), _env_rows(pairs)
    sel = select_rules(rec, env)
    lodo = sel["leave-one-domain-out"]
    assert lodo["config"].tolist() == ["A"] and lodo["val"].tolist() == [pytest.approx(0.8)]
    assert lodo["test"].tolist() == [0.45]  # the {e0} run of A at step 100
    assert sel["training-domain validation"]["held_out"].tolist() == ["e0"]  # no pair settings
    rep = Report("t")
    add_domainbed_tables(rep, rec, env)
    ((df, caption),) = [v for k, v in rep.blocks if k == "table"]
    assert df.columns.tolist()[:2] == ["method", "e0"]
    assert df["leave-one-domain-out avg"].iloc[0].startswith("0.450")
    assert "LeaveOneOutSelectionMethod" in caption
    # a missing {e0, e2} run: no leave-one-domain-out
    partial = env[env["held_out"] != "e0, e2"]
    assert "leave-one-domain-out" not in select_rules(rec, partial)


TINY = """
name = "db-tiny"
base = "dg-colored"
set = ["steps=21", "eval.every=10", "checkpoint_every=21", "model.width=16"]
seeds = 2
[grid]
task = [{ name = "colored_digits", params = { test_envs = [2], test_holdout = true } }]
"method.name" = ["erm", "groupdro"]
[random]
trials = 2
method_ranges = true
per_trial = true
default_draw = true
"optimizer.lr" = { log_uniform = [3.1623e-5, 3.1623e-3] }
"""


def test_tiny_domainbed_sweep_reports_the_80_percent(tmp_path):
    from typer.testing import CliRunner

    from genlab.cli.app import app

    (tmp_path / "tiny.toml").write_text(TINY)
    store = str(tmp_path / "store")
    res = CliRunner().invoke(app, ["sweep", str(tmp_path / "tiny.toml"), "--store", store, "-q"])
    assert res.exit_code == 0, res.output
    out = tmp_path / "r.md"
    res = CliRunner().invoke(
        app, ["report", "db-tiny", "--format", "md", "--store", store, "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    md = out.read_text()
    assert "selects on the held-out environment's 20% out split" in md
    worst = md.split("## Test environments: mean and worst", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in worst.splitlines() if r.startswith("| method.name")]
    assert rows and all(r.split("|")[2].strip() == "1" and ":out" not in r for r in rows)
