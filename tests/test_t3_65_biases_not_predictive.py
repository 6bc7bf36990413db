"""#65 (Gavrikov & Keuper, CVPR 2024): ``bias_digits`` (augmented training, filtered and shifted
test splits) and ``diag.biases_not_predictive``'s judge on synthetic tables."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from pydantic import ValidationError

from genlab.claims import CLAIMS
from genlab.claims.diag.biases_not_predictive import holistic, tau_b
from genlab.errors import SpecError
from genlab.tasks.bias_digits import (
    AUGMENTS,
    SHIFTS,
    BiasParams,
    augment,
    bias_digits,
    blur,
    frequency_filter,
)

CLAIM = CLAIMS.get("diag.biases_not_predictive").obj


def test_task_splits_and_augmented_training_set():
    data = bias_digits(BiasParams(augment="rotate"), 0)
    assert set(data.test) == {"clean", "lowpass", "highpass", *SHIFTS}
    clean = data.test["clean"]
    assert clean.x.shape[1:] == (1, 16, 16) and data.info.n_outputs == 10
    assert all(torch.equal(s.y, clean.y) for s in data.test.values())
    train = data.train["train"]
    n = len(train.y) // 2
    assert torch.equal(train.y[:n], train.y[n:]) and not torch.allclose(train.x[:n], train.x[n:])


def test_task_is_deterministic():
    a, b = bias_digits(BiasParams(augment="noise"), 2), bias_digits(BiasParams(augment="noise"), 2)
    assert torch.equal(a.train["train"].x, b.train["train"].x)
    assert all(torch.equal(a.test[s].x, b.test[s].x) for s in a.test)


def test_filters_split_an_image_into_two_bands():
    x = torch.rand(4, 1, 16, 16)
    low, high = frequency_filter(x, 2.5, "low"), frequency_filter(x, 2.5, "high")
    assert torch.allclose(low + high, x, atol=1e-5)
    assert torch.allclose(low.mean((-2, -1)), x.mean((-2, -1)), atol=1e-5)  # DC is low
    assert high.mean((-2, -1)).abs().max() < 1e-5
    assert torch.equal(blur(x, 0.0), x) and blur(x, 1.0).std() < x.std()


@pytest.mark.parametrize("kind", AUGMENTS)
def test_every_augmentation_and_zero_strength(kind):
    x = torch.rand(3, 1, 16, 16)
    out = augment(x, kind, 1.0, 2.5, torch.Generator().manual_seed(0))
    assert out.shape == x.shape and (kind == "none") == torch.allclose(out, x, atol=1e-4)
    zero = augment(x, kind, 0.0, 2.5, torch.Generator().manual_seed(0))
    assert torch.allclose(zero, x, atol=1e-5)


def test_bad_params_are_named():
    with pytest.raises(ValidationError, match="augment"):
        BiasParams(augment="cutout")
    with pytest.raises(ValidationError, match="cutoff"):
        BiasParams(cutoff=9)
    with pytest.raises(SpecError, match="axes"):
        CLAIM.config("full", {"axes": ["sketch"]})


def test_tau_b_matches_scipy_with_ties():
    from scipy.stats import kendalltau

    rng = np.random.default_rng(3)
    x, ys = rng.integers(0, 5, 25).astype(float), rng.integers(0, 4, (3, 25)).astype(float)
    assert tau_b(x, ys) == pytest.approx([kendalltau(x, y).statistic for y in ys])


def test_holistic_score():
    rng = np.random.default_rng(0)
    q = rng.random(30)
    idx = np.arange(30)
    assert holistic(q, {"a": q, "b": 2 * q})(idx) == pytest.approx(1.0)
    assert holistic(q, {"a": -q, "b": -q})(idx) == pytest.approx(1.0)  # one direction, negative
    assert holistic(q, {"a": q, "b": -q})(idx) == pytest.approx(-1.0)  # the two axes disagree
    assert np.isnan(holistic(np.ones(30), {"a": q})(idx))


@pytest.mark.parametrize(
    "case,verdict",
    [("effect", "reproduced"), ("null", "not reproduced"), ("unfit", "inconclusive")],
)
def test_judge_reaches_each_decision(case, verdict):
    cfg = CLAIM.config("full")
    assert CLAIM.evaluate(cfg, CLAIM.synthetic_table(cfg, case)).verdict == verdict


def test_zoos():
    full = CLAIM.arms(CLAIM.config("full"))
    assert len(full) == 25 and len({a.spec.run_id for a in full}) == 25
    assert {a.labels["augment"] for a in full} == set(AUGMENTS)
    assert len(CLAIM.arms(CLAIM.config("full", control="negative"))) == 24
    seeds = CLAIM.arms(CLAIM.config("full", control="positive"))
    assert len(seeds) == 16 and {a.labels["augment"] for a in seeds} == {"none"}
