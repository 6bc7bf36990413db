"""The first claim on the declarative layer, grokking.delayed_generalization: its judge on
hand-built learning curves (one test per verdict). Its controls run in ``test_claims_controls.py``."""

from __future__ import annotations

import pandas as pd
import pytest

from genlab.claims import CLAIMS

CLAIM = CLAIMS.get("grokking.delayed_generalization").obj


def judge(curves: list[list[tuple[int, float, float]]], status: str = "done"):
    """The verdict on per-seed (step, train_acc, test_acc) curves, given to the claim's own runs."""
    cfg = CLAIM.config("smoke")
    ids = [a.spec.run_id for a in CLAIM.arms(cfg)]
    rows = [
        (run_id, step, split, "accuracy", v)
        for run_id, points in zip(ids, curves, strict=True)
        for step, tr, te in points
        for split, v in (("train/main", tr), ("test/heldout", te))
    ]
    metrics = pd.DataFrame(rows, columns=["run_id", "step", "split", "metric", "value"])
    return CLAIM.judge(cfg, pd.DataFrame({"run_id": ids, "status": status}), metrics)


GROKS = [(0, 0.01, 0.01), (100, 0.995, 0.2), (200, 1.0, 0.5), (400, 1.0, 0.999)]  # ratio 4
FAST = [(0, 0.01, 0.01), (100, 0.995, 0.2), (200, 1.0, 0.995)]  # ratio 2: no delay
NEVER = [(0, 0.01, 0.01), (100, 0.995, 0.2), (400, 1.0, 0.6)]  # memorises only
UNFIT = [(0, 0.01, 0.01), (100, 0.6, 0.2), (400, 0.7, 0.3)]  # never fits the table


def test_reproduced_when_every_seed_groks_late():
    r = judge([GROKS, GROKS, GROKS])
    assert r.verdict == "reproduced", r.evidence
    assert r.statistic["median_delay_ratio"] == 4.0
    assert r.statistic["median_steps_to_test_99"] == 400


@pytest.mark.parametrize(
    ("curves", "verdict"),
    [
        ([FAST, FAST, FAST], "not reproduced"),  # generalizes with no delay
        ([NEVER, NEVER, NEVER], "not reproduced"),  # fits, never generalizes
        ([GROKS, NEVER, NEVER], "not reproduced"),
        ([GROKS, GROKS, NEVER], "inconclusive"),
        ([UNFIT, UNFIT, UNFIT], "inconclusive"),  # never fit: says nothing about grokking
    ],
)
def test_not_reproduced_or_inconclusive_when_the_delay_or_the_fit_is_missing(curves, verdict):
    assert judge(curves).verdict == verdict


def test_diverged_runs_count_as_failures():
    assert judge([GROKS, GROKS, GROKS], status="diverged").verdict == "not reproduced"
