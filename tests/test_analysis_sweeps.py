"""Aggregation, model selection and paired comparison on hand-built frames, values worked by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from genlab.analysis.aggregate import curves, environments, final_values, run_labels, summarize
from genlab.analysis.compare import paired_comparison, sign_flip_p
from genlab.analysis.selection import (
    leave_one_domain_out,
    oracle,
    selection_table,
    training_domain_validation,
)

T975_2, T975_1 = 4.302652729911275, 12.706204736174707  # Student t quantiles, 2 and 1 dof


def test_final_values_takes_each_runs_last_step():
    m = pd.DataFrame(
        [
            ("r1", 0, "a", "acc", 0.1),
            ("r1", 10, "a", "acc", 0.5),
            ("r2", 5, "a", "acc", 0.7),
            ("r2", 0, "a", "acc", 0.2),
        ],
        columns=["run_id", "step", "split", "metric", "value"],
    )
    f = final_values(m)
    assert f[["run_id", "step", "value"]].values.tolist() == [["r1", 10, 0.5], ["r2", 5, 0.7]]


def test_summarize_mean_std_ci():
    f = pd.DataFrame({"g": ["x"] * 3 + ["y"], "value": [1.0, 2.0, 3.0, 5.0]})
    s = summarize(f, ["g"]).set_index("g")
    half = T975_2 * 1.0 / math.sqrt(3)
    assert s.loc["x", "mean"] == 2 and s.loc["x", "std"] == 1 and s.loc["x", "n"] == 3
    assert s.loc["x", "ci_lo"] == pytest.approx(2 - half) and s.loc["x", "ci_hi"] == pytest.approx(
        2 + half
    )
    assert s.loc["y", "n"] == 1 and math.isnan(s.loc["y", "ci_lo"])


def test_worst_environment_beside_the_mean():
    rows = [
        ("m", 0, "test/e1", 0.8),
        ("m", 1, "test/e1", 0.6),
        ("m", 0, "test/e2", 0.4),
        ("m", 1, "test/e2", 0.2),
        ("m", 0, "train/main", 1.0),
        ("m", 1, "train/main", 1.0),
    ]
    f = pd.DataFrame(rows, columns=["method", "seed", "split", "value"]).assign(metric="accuracy")
    e = environments(f, ["method"]).iloc[0]
    half = T975_1 * math.sqrt(0.02) / math.sqrt(2)  # std of (0.6, 0.4) and of (0.4, 0.2) is 0.1414
    assert e["n_envs"] == 2 and e["mean"] == pytest.approx(0.5)
    assert e["ci_hi"] == pytest.approx(0.5 + half)
    assert e["worst_env"] == "e2" and e["worst"] == pytest.approx(0.3)
    assert e["worst_ci_lo"] == pytest.approx(0.3 - half)


def test_curves_band_per_step():
    m = pd.DataFrame(
        [
            ("r1", 1, "s", "accuracy", 0.2),
            ("r2", 1, "s", "accuracy", 0.4),
            ("r1", 2, "s", "accuracy", 0.6),
            ("r2", 2, "s", "accuracy", 0.6),
        ],
        columns=["run_id", "step", "split", "metric", "value"],
    )
    labels = pd.DataFrame({"run_id": ["r1", "r2"], "method": ["a", "a"]})
    c = curves(m, labels, ["method"], "s")
    assert c["mean"].tolist() == pytest.approx([0.3, 0.6]) and c["std"].iloc[1] == 0


def test_run_labels_finds_the_varying_fields():
    specs = [
        {"seed": s, "data_seed": 0, "optimizer": {"lr": lr, "name": "adamw"}}
        for s, lr in [(0, 0.1), (1, 0.1), (0, 0.2)]
    ]
    runs = pd.DataFrame(
        {"run_id": ["a", "b", "c"], "spec": [__import__("json").dumps(s) for s in specs]}
    )
    labels, varying = run_labels(runs)
    assert varying == ["optimizer.lr"]
    assert labels["seed"].tolist() == [0, 1, 0]


RECORDS = pd.DataFrame(
    [  # method, seed, config, val/e1, val/e2, test
        ("m", 0, "A", 0.9, 0.9, 0.50),
        ("m", 0, "B", 0.8, 0.8, 0.60),
        ("m", 1, "A", 0.7, 0.7, 0.55),
        ("m", 1, "B", 0.9, 0.8, 0.65),
    ],
    columns=["method", "seed", "config", "val/e1", "val/e2", "test"],
)


def test_training_domain_validation_and_oracle():
    tdv = training_domain_validation(RECORDS, ["val/e1", "val/e2"], "test")
    assert tdv["config"].tolist() == ["A", "B"] and tdv["test"].tolist() == [0.50, 0.65]
    orc = oracle(RECORDS, "test")
    assert orc["config"].tolist() == ["B", "B"] and orc["test"].tolist() == [0.60, 0.65]
    t = selection_table(tdv).iloc[0]
    assert t["mean"] == pytest.approx(0.575) and t["n"] == 2


def test_leave_one_domain_out():
    rows = [  # config A: held-out scores 0.7, 0.9 (mean 0.8); config B: 0.85, 0.85 (mean 0.85)
        ("m", 0, "A", "e1", 0.7, None),
        ("m", 0, "A", "e2", 0.9, None),
        ("m", 0, "A", None, None, 0.5),
        ("m", 0, "B", "e1", 0.85, None),
        ("m", 0, "B", "e2", 0.85, None),
        ("m", 0, "B", None, None, 0.6),
    ]
    f = pd.DataFrame(rows, columns=["method", "seed", "config", "held_out", "score", "test"])
    out = leave_one_domain_out(f, "held_out", "score", "test")
    assert out["config"].tolist() == ["B"]
    assert out["val"].iloc[0] == pytest.approx(0.85) and out["test"].iloc[0] == 0.6


def test_paired_comparison_by_hand():
    f = pd.DataFrame(
        {
            "method": ["a"] * 3 + ["b"] * 3,
            "seed": [0, 1, 2] * 2,
            "value": [3.0, 4.0, 5.0, 2.0, 2.0, 2.0],
        }
    )
    r = paired_comparison(f, "a", "b")
    # differences 1, 2, 3: mean 2, sd 1; of 8 sign patterns only +++ and --- reach |sum| = 6
    assert r["n"] == 3 and r["mean_diff"] == 2 and r["cohens_dz"] == pytest.approx(2.0)
    assert r["p_permutation"] == pytest.approx(0.25)
    assert r["p_wilcoxon"] == pytest.approx(0.25)
    assert r["ci_lo"] == pytest.approx(2 - T975_2 / math.sqrt(3))


def test_paired_comparison_can_find_no_difference():
    f = pd.DataFrame(
        {
            "method": ["a"] * 4 + ["b"] * 4,
            "seed": [0, 1, 2, 3] * 2,
            "value": [1.0, 2.0, 1.0, 2.0, 2.0, 1.0, 2.0, 1.0],
        }
    )
    r = paired_comparison(f, "a", "b")
    assert r["mean_diff"] == 0 and r["p_permutation"] == 1.0 and r["cohens_dz"] == 0


def test_sign_flip_monte_carlo_beyond_16_pairs():
    assert sign_flip_p([1.0] * 20) < 0.001
