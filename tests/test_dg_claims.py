"""Domain-shift claims: each one run at a configuration where it must come out "not reproduced",
plus the judges on hand-made store frames."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from genlab.claims import CLAIMS
from genlab.claims.dg import selected
from genlab.claims.runner import run_claim
from genlab.store import Store


def test_selection_is_training_domain_validation():
    rows = []
    for step, val, test in ((0, 0.5, 0.5), (10, 0.9, 0.2), (20, 0.8, 0.7)):
        rows += [("r", step, "val/a", "accuracy", val), ("r", step, "test/b", "accuracy", test)]
    sel = selected(pd.DataFrame(rows, columns=["run_id", "step", "split", "metric", "value"]))
    assert sel.loc[0, "step"] == 10 and sel.loc[0, "test/b"] == pytest.approx(0.2)


def test_colored_collapse_without_shape_signal_is_not_reproduced(tmp_path):
    # label noise 0.5: shape says nothing about the label, so nothing generalizes to +90% at 70%
    claim = CLAIMS.get("dg.colored_collapse").obj
    cfg = {"steps": 30, "eval_every": 10, "seeds": 3, "test_envs": [0], "label_noise": 0.5}
    res = run_claim(claim, Store(tmp_path), "smoke", cfg, progress=False)
    assert res.verdict == "not reproduced", res.evidence
    assert res.figure is not None and res.figure.exists()


def test_rebias_without_penalty_is_not_reproduced(tmp_path):
    # lambda = 0: F trains exactly as ERM (G never touches it), so the paired gain is exactly 0
    claim = CLAIMS.get("dg.rebias").obj
    cfg = {"steps": 5, "eval_every": 5, "seeds": 2, "rebias_lambda": 0.0}
    res = run_claim(claim, Store(tmp_path), "smoke", cfg, progress=False)
    assert res.verdict == "not reproduced", res.evidence
    assert res.statistic["gain_mean"] == pytest.approx(0.0, abs=1e-9)


def test_nonmonotone_value_both_ways(tmp_path):
    claim = CLAIMS.get("ood.nonmonotone_value").obj
    store = Store(tmp_path)
    same = run_claim(claim, store, "smoke", {"theta": 0.0, "draws": 2000}, progress=False)
    assert same.verdict == "not reproduced", same.evidence  # OOD = target: more data never hurts
    related = run_claim(claim, store, "smoke", {"theta": 45.0, "draws": 4000}, progress=False)
    assert related.verdict == "reproduced", related.evidence
    saved = store.verdicts()
    assert set(saved["verdict"]) == {"reproduced", "not reproduced"}
    assert json.loads(json.dumps(list(saved["statistic"])))  # statistics are JSON-safe


def test_instance_norm_without_in_layers_is_not_reproduced(tmp_path):
    # ibn_blocks = 0: the "IBN-a" network has no instance norm at all, so it is the BN network
    claim = CLAIMS.get("dg.instance_norm").obj
    cfg = {"steps": 4, "eval_every": 2, "seeds": 2, "ibn_blocks": 0, "channels": [8]}
    res = run_claim(claim, Store(tmp_path), "smoke", cfg, progress=False)
    assert res.verdict == "not reproduced", res.evidence
    assert res.statistic["gain_mean"] == pytest.approx(0.0, abs=1e-9)


def test_rationale_invariance_without_penalty_is_not_reproduced(tmp_path):
    # ridg_reg = 0: RIDG's objective is ERM's, so the paired gain is exactly 0
    claim = CLAIMS.get("dg.rationale_invariance").obj
    cfg = {"steps": 4, "eval_every": 2, "seeds": 2, "suite": ["colored_digits:2"],
           "method_params": {"ridg_reg": 0.0}}  # fmt: skip
    res = run_claim(claim, Store(tmp_path), "smoke", cfg, progress=False)
    assert res.verdict == "not reproduced", res.evidence
    assert res.statistic["gain_mean"] == pytest.approx(0.0, abs=1e-9)


def test_suite_config_rejects_bad_entries():
    from genlab.errors import SpecError

    claim = CLAIMS.get("dg.domain_masks").obj
    for bad in (["rotated_digits:6"], ["mnist:0"], ["colored_digits"]):
        with pytest.raises(SpecError, match="suite"):
            claim.config("smoke", {"suite": bad})


def test_domain_masks_on_the_collapsed_environment_is_not_reproduced(tmp_path):
    # -90% held out: color decides for ERM and DMG alike (both near 10%), no room for a gain
    claim = CLAIMS.get("dg.domain_masks").obj
    cfg = {"steps": 60, "eval_every": 20, "seeds": 2, "suite": ["colored_digits:2"]}
    res = run_claim(claim, Store(tmp_path), "smoke", cfg, progress=False)
    assert res.verdict == "not reproduced", res.evidence


def test_feature_contamination_without_shift_is_not_reproduced(tmp_path):
    # bg_shift = 1: the "OOD" split is drawn from the ID distribution, so nothing can drop
    claim = CLAIMS.get("ood.feature_contamination").obj
    cfg = {"steps": 40, "seeds": 2, "bg_shift": 1.0, "width": 16}
    res = run_claim(claim, Store(tmp_path), "smoke", cfg, progress=False)
    assert res.verdict == "not reproduced", res.evidence
