"""The grokking claims: each has a configuration where it must come out "not reproduced", the
linear prediction formula matches a direct simulation, and bad configs are SpecErrors."""

from __future__ import annotations

import numpy as np
import pytest

from genlab.claims import CLAIMS
from genlab.claims.grokking_linear import predicted_grokking_step
from genlab.claims.runner import run_claim
from genlab.errors import SpecError
from genlab.store import Store


def _run(claim_id: str, tmp_path, **overrides):
    return run_claim(
        CLAIMS.get(claim_id).obj, Store(tmp_path / "s"), "smoke", overrides, progress=False
    )


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
    "kw, match",
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


@pytest.mark.slow
def test_linear_reproduces_on_one_setting(tmp_path) -> None:
    r = _run("grokking.linear", tmp_path, d_ins=[100], weight_decays=[0.0], seeds=1)
    assert r.statistic["max_rel_error"] < 0.1
    assert r.figure is not None and r.figure.exists()


def test_linear_not_reproduced_when_budget_ends_before_the_jump(tmp_path) -> None:
    r = _run(
        "grokking.linear", tmp_path, d_ins=[100], weight_decays=[0.0], seeds=1, steps_factor=0.5
    )
    assert r.verdict == "not reproduced"


def test_softmax_collapse_not_reproduced_in_a_tiny_budget(tmp_path) -> None:
    r = _run("grokking.softmax_collapse", tmp_path, p=11, steps=20, width=16, embed_dim=4)
    assert r.verdict == "not reproduced"
    assert r.statistic["stablemax_generalizes"] == 0.0
    with pytest.raises(SpecError, match="claim.arms"):
        _run("grokking.softmax_collapse", tmp_path, arms=["adam"])


def test_data_fraction_not_reproduced_without_generalization(tmp_path) -> None:
    r = _run("grokking.data_fraction", tmp_path, p=11, steps=20, fractions=[0.3, 0.6])
    assert r.verdict == "not reproduced"
    assert r.figure is not None and r.figure.exists()


def test_phases_not_reproduced_on_a_one_cell_grid(tmp_path) -> None:
    r = _run(
        "grokking.phases", tmp_path, p=11, steps=20, xs=[0.0], ys=[1e-3], width=16, embed_dim=4
    )
    assert r.verdict == "not reproduced"
    assert r.statistic["all_four_phases"] == 0.0
    assert r.figure is not None and r.figure.exists()


def test_ungrokking_not_reproduced_when_nothing_grokked(tmp_path) -> None:
    r = _run("grokking.ungrokking", tmp_path, p=11, steps=20, switch_step=10, width=16, embed_dim=4)
    assert r.verdict == "not reproduced"
    assert r.statistic["grokked_before_switch"] == 0.0
    with pytest.raises(SpecError, match="keep_fractions"):
        _run("grokking.ungrokking", tmp_path, keep_fractions=[0.1, 0.7])


def test_semi_grokking_not_reproduced_in_a_tiny_budget(tmp_path) -> None:
    r = _run("grokking.semi_grokking", tmp_path, p=11, steps=20, width=16, embed_dim=4)
    assert r.verdict == "not reproduced"


def test_moe_pathways_not_reproduced_without_grokking(tmp_path) -> None:
    r = _run("grokking.moe_pathways", tmp_path, p=11, steps=20, d_model=8)
    assert r.verdict == "not reproduced"
    assert r.statistic["seeds_grokked"] == 0.0
