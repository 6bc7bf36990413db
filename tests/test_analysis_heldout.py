"""DomainBed's held-out table, report labels and within-setting pairing on hand-built frames,
values worked out by hand."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from genlab.analysis.aggregate import heldout_table, run_groups
from genlab.analysis.compare import compare_within, paired_comparison
from genlab.report.document import Report
from genlab.report.sweep_report import add_domainbed_tables
from genlab.report.tables import heldout_wide

T975_1 = 12.706204736174707  # Student t quantile, 1 dof


def _runs(specs: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(
        {"run_id": [f"r{i}" for i in range(len(specs))], "spec": [json.dumps(s) for s in specs]}
    )


def _spec(method: str, params: dict, task: str, tparams: dict, seed: int = 0) -> dict:
    return {
        "seed": seed,
        "data_seed": 0,
        "method": {"name": method, "params": params},
        "task": {"name": task, "params": tparams},
    }


def test_run_groups_label_by_method_never_nan():
    specs = [
        _spec("erm", {"loss": "softmax"}, "colored", {"noise": 0.25, "test_envs": [e]}, s)
        for e in (0, 2)
        for s in (0, 1)
    ]
    specs += [
        _spec("groupdro", {"eta": 0.01}, "colored", {"noise": 0.25, "test_envs": [e]})
        for e in (0, 2)
    ]
    specs += [_spec("erm", {"loss": "softmax"}, "rotated", {"size": 8, "test_envs": [1]})]
    g = run_groups(_runs(specs))
    assert g["config"].tolist() == ["method.name=erm"] * 4 + ["method.name=groupdro"] * 2 + [
        "method.name=erm"
    ]
    assert g["task"].tolist() == ["colored"] * 6 + ["rotated"]  # noise, size: constant per task
    assert g["setting"].tolist()[:2] == ["test_envs=[0]"] * 2 and g["setting"].iloc[-1] == (
        "test_envs=[1]"
    )
    assert g["group"].iloc[0] == "method.name=erm, task.name=colored, task.params.test_envs=[0]"
    assert not g.apply(lambda r: r.astype(str).str.contains("nan")).any().any()


def test_run_groups_shows_a_param_only_where_it_varies_within_its_method():
    specs = [
        _spec("erm", {"loss": "softmax"}, "t", {}),
        _spec("gdro", {"eta": 0.1}, "t", {}),
        _spec("gdro", {"eta": 0.01}, "t", {}),
    ]
    g = run_groups(_runs(specs))
    assert g["config"].tolist() == [
        "method.name=erm",
        "method.name=gdro, method.params.eta=0.1",
        "method.name=gdro, method.params.eta=0.01",
    ]
    assert g["setting"].tolist() == ["", "", ""] and g["task"].tolist() == ["t"] * 3


def test_run_groups_only_seeds_vary():
    g = run_groups(_runs([_spec("erm", {}, "t", {}, s) for s in (0, 1)]))
    assert g["group"].tolist() == ["all runs"] * 2 and g["method"].tolist() == ["erm"] * 2


SELECTED = pd.DataFrame(
    [  # method, setting, trial, test
        ("a", "e1", 0, 0.8),
        ("a", "e1", 1, 0.6),
        ("a", "e2", 0, 0.4),
        ("a", "e2", 1, 0.2),
        ("b", "e1", 0, 0.5),
        ("b", "e1", 1, 0.5),
        ("b", "e2", 0, 0.9),
        ("b", "e2", 1, 0.7),
        ("b", "e1", 2, 0.2),  # trial 2 lacks e2: counts for e1, not for the average
    ],
    columns=["method", "setting", "trial", "test"],
).assign(task="T")


def test_heldout_table_by_hand():
    t = heldout_table(SELECTED).set_index(["method", "kind", "setting"])
    half = T975_1 * 0.1  # sd of two values 0.2 apart is 0.1414; / sqrt(2) gives 0.1
    assert t.loc[("a", "setting", "e1"), "mean"] == pytest.approx(0.7)
    assert t.loc[("a", "setting", "e1"), "ci_hi"] == pytest.approx(0.7 + half)
    # a: per-trial averages (0.8+0.4)/2 = 0.6 and (0.6+0.2)/2 = 0.4 -> 0.5; worst is e2 at 0.3
    assert t.loc[("a", "avg", "avg"), "mean"] == pytest.approx(0.5)
    assert t.loc[("a", "avg", "avg"), "ci_lo"] == pytest.approx(0.5 - half)
    assert t.loc[("a", "worst", "e2"), "mean"] == pytest.approx(0.3)
    # b: e1 over trials 0, 1, 2 = 0.4; average only over trials 0 and 1: 0.7, 0.6 -> 0.65
    assert t.loc[("b", "setting", "e1"), "mean"] == pytest.approx(0.4)
    assert t.loc[("b", "setting", "e1"), "n"] == 3
    assert t.loc[("b", "avg", "avg"), "mean"] == pytest.approx(0.65)
    assert t.loc[("b", "avg", "avg"), "n"] == 2
    assert t.loc[("b", "worst", "e1"), "mean"] == pytest.approx(0.4)


def test_heldout_wide_one_row_per_method():
    w = heldout_wide(heldout_table(SELECTED))
    assert w.columns.tolist() == ["method", "e1", "e2", "avg", "worst setting", "worst"]
    assert w["method"].tolist() == ["a", "b"]
    a = w.iloc[0]
    assert a["e1"].startswith("0.700 [") and a["avg"].startswith("0.500 [")
    assert a["worst setting"] == "e2" and a["worst"].startswith("0.300 [")


def test_compare_within_never_pairs_across_settings():
    rows = [  # setting, method, seed, value: x appears first, erm is still the reference
        ("s1", "x", 0, 0.7),
        ("s1", "x", 1, 0.9),
        ("s1", "erm", 0, 0.5),
        ("s1", "erm", 1, 0.6),
        ("s2", "x", 0, 0.2),
        ("s2", "x", 1, 0.2),
        ("s2", "erm", 0, 0.1),
        ("s2", "erm", 1, 0.2),
    ]
    f = pd.DataFrame(rows, columns=["setting", "method", "seed", "value"]).assign(data_seed=0)
    c = compare_within(f, ["setting"], reference="erm").set_index("setting")
    assert c["vs"].tolist() == ["erm", "erm"] and c["method"].tolist() == ["x", "x"]
    assert c.loc["s1", "n"] == 2 and c.loc["s1", "mean_diff"] == pytest.approx(0.25)
    assert c.loc["s2", "mean_diff"] == pytest.approx(0.05)
    first = compare_within(f, ["setting"], reference="irm")  # absent: the first method is used
    assert first["vs"].tolist() == ["x", "x"] and first["method"].tolist() == ["erm", "erm"]


def test_paired_comparison_on_several_keys():
    f = pd.DataFrame(
        {
            "method": ["a", "a", "b", "b"],
            "seed": [0, 0, 0, 0],
            "data_seed": [0, 1, 0, 1],
            "value": [1.0, 3.0, 0.0, 0.0],
        }
    )
    r = paired_comparison(f, "a", "b", seed=["seed", "data_seed"])
    assert r["n"] == 2 and r["mean_diff"] == 2.0


def _rec(rows: list[tuple]) -> pd.DataFrame:
    cols = ["task", "method", "config", "held_out", "setting", "trial", "val", "test"]
    return pd.DataFrame(rows, columns=cols)


def test_domainbed_table_selects_by_training_domain_validation():
    rec = _rec(
        [  # method m, two configs; trial 0 picks A (val 0.9), trial 1 picks B (val 0.9)
            ("T", "m", "A", "e1", "test_envs=[0]", "0/0", 0.9, 0.50),
            ("T", "m", "B", "e1", "test_envs=[0]", "0/0", 0.8, 0.60),
            ("T", "m", "A", "e1", "test_envs=[0]", "1/0", 0.7, 0.55),
            ("T", "m", "B", "e1", "test_envs=[0]", "1/0", 0.9, 0.65),
        ]
    )
    rep = Report("t")
    add_domainbed_tables(rep, rec)
    ((df, caption),) = [v for k, v in rep.blocks if k == "table"]
    assert df["method"].tolist() == ["m"]
    assert df["e1"].iloc[0].startswith("0.575 [")  # mean of 0.50 and 0.65
    assert "training-domain validation" in caption and "up to 2 configuration(s)" in caption
    assert df["oracle avg"].iloc[0].startswith("0.625 [")  # B in both trials: 0.60, 0.65


def test_domainbed_table_one_row_per_method_and_task_erm_first():
    rows = []
    for task, envs in (("T1", ("e1", "e2")), ("T2", ("f1",))):
        for m in ("irm", "erm"):
            for i, e in enumerate(envs):
                for t in ("0/0", "1/0"):
                    rows.append((task, m, f"method.name={m}", e, f"test_envs=[{i}]", t, 0.8, 0.5))
    rep = Report("t")
    add_domainbed_tables(rep, _rec(rows))
    tables = [v for k, v in rep.blocks if k == "table"]
    assert len(tables) == 2
    assert tables[0][0].columns.tolist() == [
        "method",
        "e1",
        "e2",
        "avg",
        "worst setting",
        "worst",
        "oracle avg",
        "last checkpoint avg",
    ]
    assert tables[0][0]["method"].tolist() == ["erm", "irm"]
    assert tables[0][1].startswith("T1:") and "up to 1 configuration(s)" in tables[0][1]
    assert tables[0][0]["e1"].iloc[0] == "0.500 [0.500, 0.500]"


def test_no_domainbed_table_without_held_out_settings():
    rep = Report("t")
    add_domainbed_tables(rep, _rec([("T", "erm", "lr=1", "heldout", "", "0/0", None, 0.5)]))
    assert rep.blocks == []
