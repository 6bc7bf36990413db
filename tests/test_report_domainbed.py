"""The DomainBed table of ``genlab report`` on a synthetic store in which the three selection rules
pick different checkpoints: training-domain validation (best val over configurations and
checkpoints), the test-domain oracle (best held-out accuracy at the last checkpoint) and the last
checkpoint (best val at the last checkpoint). Values worked out by hand."""

from __future__ import annotations

import json

import pytest

from genlab.report.sweep_report import build_report
from genlab.store import Store

# (config lr, step) -> (val, test) in trial 0; trial 1 adds 0.02 to every test value.
# training-domain validation: lr 0.1 at step 100 (val 0.95) -> test 0.40
# last checkpoint: step 200, lr 0.1 (val 0.90) beats lr 0.2 (0.80) -> test 0.50
# oracle: step 200, lr 0.2 (test 0.70) beats lr 0.1 (0.50) -> test 0.70
# step 0 (untrained) has the best val of all and must never be selected
CURVES = {
    0.1: {0: (0.99, 0.10), 100: (0.95, 0.40), 200: (0.90, 0.50)},
    0.2: {0: (0.99, 0.10), 100: (0.70, 0.90), 200: (0.80, 0.70)},
}


def _spec(method: str, lr: float, env: int, seed: int) -> dict:
    return {
        "task": {"name": "toy", "params": {"test_envs": [env]}},
        "method": {"name": method},
        "optimizer": {"name": "adam", "lr": lr},
        "seed": seed,
        "data_seed": seed,
    }


@pytest.fixture()
def report(tmp_path):
    store, ids = Store(tmp_path / "store"), []
    for method, shift in (("erm", 0.0), ("irm", -0.1)):
        for env in (0, 1):
            for seed in (0, 1):
                for lr, curve in CURVES.items():
                    rid = f"{method}-{env}-{seed}-{lr}"
                    store.begin(rid, json.dumps(_spec(method, lr, env, seed)))
                    rows = []
                    for step, (val, test) in curve.items():
                        test += 0.02 * seed + shift + 0.1 * env * (step > 0)
                        rows += [
                            (step, "val/other", "accuracy", val),
                            (step, f"test/e{env}", "accuracy", test),
                            (step, "train/other", "accuracy", 1.0),
                        ]
                    store.log_metrics(rid, rows)
                    store.finish(rid, "done", 200, 1.0)
                    ids.append(rid)
    return build_report(store, ids, "toy")


def test_each_selection_rule_has_its_column(report):
    ((table, caption),) = [
        v for k, v in report.blocks if k == "table" and "held-out environment" in v[1]
    ]
    assert table.columns.tolist() == [
        "method",
        "e0",
        "e1",
        "avg",
        "worst setting",
        "worst",
        "oracle avg",
        "last checkpoint avg",
    ]
    erm = table.set_index("method").loc["erm"]
    # training-domain validation: 0.40 / 0.42 on e0, +0.1 on e1
    assert erm["e0"].startswith("0.410 [") and erm["e1"].startswith("0.510 [")
    assert erm["avg"].startswith("0.460 [") and erm["worst setting"] == "e0"
    assert erm["worst"].startswith("0.410 [")
    assert erm["oracle avg"].startswith("0.760 [")  # (0.71 + 0.81) / 2
    assert erm["last checkpoint avg"].startswith("0.560 [")  # (0.51 + 0.61) / 2
    assert table["method"].tolist() == ["erm", "irm"]
    assert table.set_index("method").loc["irm", "avg"].startswith("0.360 [")
    assert "up to 2 configuration(s)" in caption and "2 trial(s)" in caption
    assert "IIDAccuracySelectionMethod" in caption and "OracleSelectionMethod" in caption
