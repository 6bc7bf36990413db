"""The first claim, grokking.delayed_generalization: its judge on hand-built results, and a real
configuration (train fraction 0.2, no weight decay) in which it must come out "not reproduced"."""

from __future__ import annotations

import pandas as pd
import pytest

from genlab.claims import CLAIMS
from genlab.claims.runner import run_claim

CLAIM = "grokking.delayed_generalization"


def frames(curves: dict[str, list[tuple[int, float, float]]], status: str = "done"):
    """runs/metrics frames from per-run (step, train_acc, test_acc) lists."""
    rows = []
    for run_id, points in curves.items():
        for step, tr, te in points:
            rows += [(run_id, step, "train/main", "accuracy", tr),
                     (run_id, step, "test/heldout", "accuracy", te)]  # fmt: skip
    metrics = pd.DataFrame(rows, columns=["run_id", "step", "split", "metric", "value"])
    runs = pd.DataFrame({"run_id": list(curves), "status": status})
    return runs, metrics


def judge(curves, status="done"):
    claim = CLAIMS.get(CLAIM).obj
    return claim.judge(claim.config("smoke"), *frames(curves, status))


GROKS = [(0, 0.01, 0.01), (100, 0.995, 0.2), (200, 1.0, 0.5), (400, 1.0, 0.999)]  # ratio 4
FAST = [(0, 0.01, 0.01), (100, 0.995, 0.2), (200, 1.0, 0.995)]  # ratio 2: no delay
NEVER = [(0, 0.01, 0.01), (100, 0.995, 0.2), (400, 1.0, 0.6)]  # memorises only


def test_judge_reproduced_when_every_seed_groks_late():
    r = judge({"a": GROKS, "b": GROKS, "c": GROKS})
    assert r.verdict == "reproduced"
    assert r.statistic["median_delay_ratio"] == 4.0
    assert r.statistic["median_steps_to_test_99"] == 400


@pytest.mark.parametrize(
    ("curves", "verdict"),
    [
        ({"a": FAST, "b": FAST, "c": FAST}, "not reproduced"),  # generalizes with no delay
        ({"a": NEVER, "b": NEVER, "c": NEVER}, "not reproduced"),  # never generalizes
        ({"a": GROKS, "b": NEVER, "c": NEVER}, "not reproduced"),
        ({"a": GROKS, "b": GROKS, "c": NEVER}, "inconclusive"),
    ],
)
def test_judge_fails_when_the_delay_or_the_generalization_is_missing(curves, verdict):
    assert judge(curves).verdict == verdict


def test_judge_counts_diverged_runs_as_failures():
    assert (
        judge({"a": GROKS, "b": GROKS, "c": GROKS}, status="diverged").verdict == "not reproduced"
    )


def test_small_train_fraction_without_weight_decay_is_not_reproduced(store):
    """Power et al.: at a small train fraction and no regularisation the model only memorises."""
    claim = CLAIMS.get(CLAIM).obj
    over = {"train_fraction": 0.2, "weight_decay": 0.0, "steps": 300}
    result = run_claim(claim, store, "smoke", over, progress=False)
    assert result.verdict == "not reproduced", result.evidence
    assert result.statistic["seeds"] == 3
    assert result.statistic["median_steps_to_train_99"] <= 300  # it did fit the training set
    assert result.figure is not None and result.figure.exists()
    saved = store.verdicts()
    assert list(saved["verdict"]) == ["not reproduced"] and saved["config"][0]["weight_decay"] == 0
