"""#105 (Cohen et al., MIDL 2020): ``shift_kinds_digits``, the ``predictions`` probe (packed
classes, Cohen's kappa) and ``dg.label_vs_image_shift``'s judge on synthetic tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from pydantic import ValidationError

from genlab.claims import CLAIMS
from genlab.errors import SpecError
from genlab.probes.predictions import cohen_kappa, pack, per_value, unpack
from genlab.tasks.shift_kinds import ShiftKindsParams, shift_kinds_digits, target_convention

CLAIM = CLAIMS.get("dg.label_vs_image_shift").obj


def test_task_splits_share_the_held_out_digits():
    data = shift_kinds_digits(ShiftKindsParams(), 0)
    clean, image, label = (data.test[s] for s in ("clean", "image", "label"))
    assert clean.x.shape[1:] == (1, 16, 16) and data.info.n_outputs == 10
    assert torch.equal(clean.y, image.y) and torch.equal(clean.x, label.x)
    assert not torch.allclose(clean.x, image.x, atol=1e-3)
    renamed = (clean.y != label.y).float().mean().item()
    assert 0.2 < renamed < 0.4  # 3 of 10 classes renamed
    assert len(data.train["train"].y) + len(data.val["train"].y) + len(clean.y) == 1797


def test_task_is_deterministic_and_zero_shifts_are_clean():
    a, b = shift_kinds_digits(ShiftKindsParams(), 3), shift_kinds_digits(ShiftKindsParams(), 3)
    assert all(torch.equal(a.test[s].x, b.test[s].x) for s in a.test)
    zero = shift_kinds_digits(ShiftKindsParams(image_shift=0.0, label_shift=0.0), 3)
    assert torch.allclose(zero.test["image"].x, zero.test["clean"].x, atol=1e-5)
    assert torch.equal(zero.test["label"].y, zero.test["clean"].y)


@pytest.mark.parametrize("share,moved", [(0.0, 0), (0.1, 1), (0.3, 3), (1.0, 10)])
def test_target_convention_renames_the_stated_share(share, moved):
    names = target_convention(share, torch.Generator().manual_seed(1))
    assert int((names != torch.arange(10)).sum()) == moved


def test_bad_params_are_named():
    with pytest.raises(ValidationError, match="image_factors"):
        ShiftKindsParams(image_factors=["blur"])
    with pytest.raises(ValidationError, match="label_shift"):
        ShiftKindsParams(label_shift=1.5)
    with pytest.raises(SpecError, match="image_shift"):
        CLAIM.config("full", {"image_shift": -1})


def test_pack_roundtrip_is_exact():
    rng = np.random.default_rng(0)
    for classes in (2, 10, 37):
        pred = rng.integers(0, classes, 1001)
        values = pack(pred, classes)
        assert max(values) < 2**53 and len(values) == -(-1001 // per_value(classes))
        assert np.array_equal(unpack(values, 1001, classes), pred)
    with pytest.raises(ValueError, match="hold"):
        unpack(pack(np.zeros(3, int), 10), 30, 10)


def test_cohen_kappa_matches_sklearn():
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(1)
    a = rng.integers(0, 10, 400)
    b = np.where(rng.random(400) < 0.6, a, rng.integers(0, 10, 400))
    assert cohen_kappa(a, b, 10) == pytest.approx(cohen_kappa_score(a, b))
    assert cohen_kappa(a, a, 10) == pytest.approx(1.0)


def test_run_table_fills_kappa_from_packed_predictions():
    cfg = CLAIM.config("smoke", {"seeds": 2})
    arms = CLAIM.arms(cfg)
    rng = np.random.default_rng(2)
    truth = rng.integers(0, 10, 50)
    rows = []
    for arm in arms:
        for s in ("clean", "image", "label"):
            pred = truth if arm.labels["model"] == "a" or s != "image" else (truth + 1) % 10
            rows += [
                (arm.spec.run_id, 300, f"test/{s}", f"pred_{j:03d}", v)
                for j, v in enumerate(pack(pred, 10))
            ]
            rows += [
                (arm.spec.run_id, 300, f"test/{s}", "pred_n", 50.0),
                (arm.spec.run_id, 300, f"test/{s}", "accuracy", 0.9),
            ]
    metrics = pd.DataFrame(rows, columns=["run_id", "step", "split", "metric", "value"])
    runs = pd.DataFrame({"run_id": [a.spec.run_id for a in arms], "status": "done"})
    table = CLAIM.run_table(arms, runs, metrics)
    assert (table["kappa_clean"] == 1.0).all() and (table["kappa_label"] == 1.0).all()
    assert (table["kappa_image"] < 0).all()  # b is always one class off a


@pytest.mark.parametrize(
    "case,verdict",
    [("effect", "reproduced"), ("null", "not reproduced"), ("unfit", "inconclusive")],
)
def test_judge_reaches_each_decision(case, verdict):
    cfg = CLAIM.config("full")
    assert CLAIM.evaluate(cfg, CLAIM.synthetic_table(cfg, case)).verdict == verdict


def test_arms_pair_two_models_per_seed_with_predictions():
    arms = CLAIM.arms(CLAIM.config("full"))
    assert len(arms) == 12 and {a.labels["model"] for a in arms} == {"a", "b"}
    assert all("predictions" in [p.name for p in a.spec.eval.probes] for a in arms)
