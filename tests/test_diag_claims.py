"""Diagnostics claims: tiny configurations that reproduce, and negative controls that must not."""

from __future__ import annotations

import pandas as pd
import pytest

from genlab.claims import CLAIMS
from genlab.claims.runner import run_claim
from genlab.errors import SpecError
from genlab.store import Store

TINY_COHERENCE = {"seeds": 3, "train_size": 400, "width": 32, "steps": 40, "early_steps": 40,
                  "max_samples": 400, "every": 10}  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return Store(tmp_path_factory.mktemp("diag"))


def test_coherence_real_vs_random_reproduces_on_a_tiny_config(store):
    claim = CLAIMS.get("diag.coherence_real_vs_random").obj
    res = run_claim(claim, store, "smoke", TINY_COHERENCE, progress=False)
    assert res.verdict == "reproduced", res.evidence
    assert res.statistic["min_ratio"] >= claim.MIN_RATIO
    assert res.figure is not None and res.figure.is_file()


def test_coherence_negative_control_real_vs_real_is_not_reproduced(store):
    claim = CLAIMS.get("diag.coherence_real_vs_random").obj
    res = run_claim(claim, store, "smoke", {**TINY_COHERENCE, "contrast": "real"}, progress=False)
    assert res.verdict == "not reproduced"
    assert res.statistic["median_ratio"] == pytest.approx(1.0)


def test_gwa_without_label_noise_is_not_reproduced(store):
    """No corrupted labels: nothing for per-sample GWA to flag, so the claim cannot hold."""
    claim = CLAIMS.get("diag.gwa_early_stopping").obj
    cfg = {"label_noise": 0.0, "train_size": 200, "width": 32, "epochs": 6, "batch_size": 50}
    res = run_claim(claim, store, "smoke", cfg, progress=False)
    assert res.verdict == "not reproduced"
    assert res.statistic["seeds_passing"] == 0


def _gwa_metrics(run_ids, peak_gwa, peak_acc, spe=10, epochs=20):
    rows = []
    for rid in run_ids:
        for e in range(1, epochs + 1):
            step = e * spe
            rows += [(rid, step, "train/main", "gwa", -abs(e - peak_gwa)),
                     (rid, step, "test/heldout", "accuracy", 1 - abs(e - peak_acc) / 100),
                     (rid, step, "train/main", "gwa_noise_auroc", 0.9)]  # fmt: skip
    return pd.DataFrame(rows, columns=["run_id", "step", "split", "metric", "value"])


@pytest.mark.parametrize("peak_acc, verdict", [(8, "reproduced"), (16, "not reproduced")])
def test_gwa_judge_predicate(peak_acc, verdict):
    claim = CLAIMS.get("diag.gwa_early_stopping").obj
    cfg = claim.config("smoke", {"train_size": 100, "batch_size": 10, "epochs": 20})
    ids = [s.run_id for s in claim.specs(cfg)]
    res = claim.judge(cfg, pd.DataFrame({"run_id": ids}), _gwa_metrics(ids, 10, peak_acc))
    assert res.verdict == verdict
    assert res.statistic["median_epoch_gap"] == abs(10 - peak_acc)


def test_bad_claim_config_is_a_spec_error():
    with pytest.raises(SpecError, match="claim.contrast"):
        CLAIMS.get("diag.coherence_real_vs_random").obj.config("smoke", {"contrast": "shuffled"})


TINY_ZOO = {"size": 4, "steps": 20, "train_size": 100, "max_samples": 16,
            "vary": {"width": [8, 16, 32, 64]}}  # fmt: skip


def test_constrained_margin_control_input_vs_input_is_not_reproduced(store):
    claim = CLAIMS.get("diag.constrained_margin").obj
    res = run_claim(claim, store, "smoke", {**TINY_ZOO, "contender": "input"}, progress=False)
    assert res.verdict == "not reproduced", res.evidence
    assert res.statistic["models"] == 4


@pytest.mark.parametrize("sign, verdict", [(-1, "reproduced"), (1, "not reproduced")])
def test_constrained_margin_judge_predicate(sign, verdict):
    claim = CLAIMS.get("diag.constrained_margin").obj
    cfg = claim.config("smoke", TINY_ZOO)
    ids = [s.run_id for s in claim.specs(cfg)]
    rows = []
    for i, rid in enumerate(ids):
        gap = 0.1 * i
        rows += [(rid, 20, "train/main", "accuracy", 1.0),
                 (rid, 20, "test/heldout", "accuracy", 1.0 - gap),
                 (rid, 20, "train/main", "constrained_margin", sign * gap),
                 (rid, 20, "train/main", "input_margin", [0.3, 0.1, 0.4, 0.2][i])]  # fmt: skip
    metrics = pd.DataFrame(rows, columns=["run_id", "step", "split", "metric", "value"])
    res = claim.judge(cfg, pd.DataFrame({"run_id": ids, "status": "done"}), metrics)
    assert res.verdict == verdict
    assert res.statistic["tau_constrained"] == pytest.approx(sign * 1.0)
