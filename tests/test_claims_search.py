"""DomainBed's random search inside a claim (``genlab.claims.search``): the draws, the pick by
training-domain validation, and the dg claims that search at the full budget."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from genlab.claims import CLAIMS
from genlab.claims.search import BATCH_SIZES, best_draw, draw, with_draws
from genlab.design import Design
from genlab.sweep.spec import method_ranges

BASE = {
    "task": {"name": "colored_digits", "params": {"test_envs": [2]}},
    "model": {"name": "mlp"},
    "method": {"name": "irm"},
    "optimizer": {"name": "adam", "lr": 1e-3},
    "steps": 5,
    "batch_size": 64,
}


def _arms(method=None, seeds=2):
    base = {**BASE, "method": method or BASE["method"]}
    axes = {"setting": {"a": {}, "b": {"task.params.test_envs": [1]}}}
    return Design(base, axes, seeds=seeds).expand()


def test_one_draw_is_the_arms_unchanged():
    arms = _arms()
    assert [a.spec.run_id for a in with_draws(arms, 1)] == [a.spec.run_id for a in arms]
    assert all("draw" not in a.labels for a in with_draws(arms, 1))
    with pytest.raises(ValueError, match="search must be at least 1"):
        with_draws(arms, 0)


def test_draws_are_domainbed_ranges_and_draw_zero_is_the_arm():
    arms = _arms()
    out = with_draws(arms, 4)
    assert len(out) == 4 * len(arms)
    zero = [a for a in out if a.labels["draw"] == 0]
    assert [a.spec.run_id for a in zero] == [a.spec.run_id for a in arms]
    ranges = method_ranges("irm")
    for a in out:
        if a.labels["draw"] == 0:
            continue
        assert 10**-4.5 <= a.spec.optimizer.lr <= 10**-2.5
        assert a.spec.batch_size in BATCH_SIZES
        lam = a.spec.method.params["irm_lambda"]
        assert ranges["irm_lambda"][1] <= math.log10(lam) <= ranges["irm_lambda"][2]
    assert len({a.spec.run_id for a in out}) == len(out)
    # repeatable, and one draw per trial (seed) shared by the held-out settings
    assert [a.spec.run_id for a in with_draws(arms, 4)] == [a.spec.run_id for a in out]
    by = {(a.labels["setting"], a.labels["seed"], a.labels["draw"]): a.spec for a in out}
    assert by[("a", 0, 2)].optimizer.lr == by[("b", 0, 2)].optimizer.lr
    assert by[("a", 0, 2)].optimizer.lr != by[("a", 1, 2)].optimizer.lr


def test_kept_parameters_are_not_drawn():
    arms = _arms({"name": "irm", "params": {"irm_lambda": 7.0}})
    kept = with_draws(arms, 3)
    assert {a.spec.method.params["irm_lambda"] for a in kept} == {7.0}
    free = with_draws(arms, 3, keep=())
    assert len({a.spec.method.params["irm_lambda"] for a in free}) > 1
    assert "irm_lambda" not in draw("irm", {"irm_lambda"}, 0, 1).get("method.params", {})
    assert "method.params.irm_lambda" not in draw("irm", {"irm_lambda"}, 0, 1)


def test_best_draw_picks_the_highest_validation_per_arm_and_seed():
    table = pd.DataFrame(
        {
            "arm": ["x"] * 6,
            "seed": [0, 0, 0, 1, 1, 1],
            "draw": [0, 1, 2, 0, 1, 2],
            "val": [0.5, 0.9, 0.7, np.nan, 0.6, 0.6],
            "heldout": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
        }
    )
    picked = best_draw(table, "val", ["arm", "seed"])
    assert "draw" not in picked
    assert picked["heldout"].tolist() == [0.2, 0.5]  # ties: the lower draw; NaN never wins
    assert best_draw(table.drop(columns="draw"), "val", ["arm", "seed"]).equals(
        table.drop(columns="draw")
    )


@pytest.mark.parametrize("cid", ["dg.rebias", "dg.modify", "dg.lowrank", "dg.rationale_invariance"])
def test_searched_claims_judge_each_arm_at_its_best_draw(cid):
    """At full the arms run at several draws; the judge reads one row per arm and seed, the draw
    of best validation: a draw that wins on validation carries its held-out value into the
    verdict, and the smoke budget runs the defaults only."""
    claim = CLAIMS.get(cid).obj
    assert "draw" not in pd.DataFrame([a.labels for a in claim.arms(claim.config("smoke"))])
    cfg = claim.config("full")
    table = claim.synthetic_table(cfg, "null")
    n_draws = table["draw"].nunique()
    assert n_draws == cfg.search > 1
    measure = "unbiased" if cid == "dg.rebias" else "heldout"
    best = table["draw"] == n_draws - 1
    table.loc[best, "val"] = 1.0
    table.loc[best, measure] = 0.0
    result = claim.evaluate(cfg, table)
    assert len(result.runs) == len(table) // n_draws
    assert (result.runs[measure] == 0.0).all()
    assert len(result.run_ids) == len(table)  # provenance keeps every draw
