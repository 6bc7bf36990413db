"""Inductive bias from sampled hypotheses (#45, #43): the estimator against an exactly countable
hypothesis space, the normal-tail path, and the trend with intrinsic dimension."""

from __future__ import annotations

import math

import numpy as np
import pytest

from genlab.probes.inductive_bias import (
    inductive_bias_bits,
    intrinsic_dim_task,
    random_feature_sampler,
)


def test_exact_on_all_boolean_functions_of_three_bits():
    """Uniform truth tables on 8 inputs; 4 are training points. Of the consistent tables, the test
    error on the other 4 is Binomial(4, 1/2)/4, so P(error <= 1/4) = 5/16 exactly."""
    y = np.array([0, 1, 1, 0, 1, 0, 0, 1])
    train, test = np.arange(4), np.arange(4, 8)

    def sampler(rng):
        h = rng.integers(0, 2, 8)
        return float(np.mean(h[train] != y[train])), float(np.mean(h[test] != y[test]))

    r = inductive_bias_bits(sampler, 8000, epsilon=0.25, seed=0)
    assert r.method == "empirical" and r.fitting > 300
    assert r.bits == pytest.approx(math.log2(16 / 5), abs=0.2)


def test_normal_tail_when_no_hypothesis_reaches_epsilon():
    r = inductive_bias_bits(lambda rng: (0.0, 0.5 + 0.05 * rng.standard_normal()), 2000, 0.2)
    assert r.method == "normal-tail" and r.hits == 0
    assert r.bits == pytest.approx(-math.log2(0.5 * math.erfc(6 / math.sqrt(2))), rel=0.1)


def test_more_bits_needed_at_higher_intrinsic_dimension():
    bits = []
    for d in (1, 8):
        task = intrinsic_dim_task(d, 16, 48, 200, seed=0)
        r = inductive_bias_bits(random_feature_sampler(*task, width=96), 30, epsilon=0.1)
        bits.append(r.bits)
    assert bits[1] > bits[0] + 5, bits


def test_bad_input():
    with pytest.raises(ValueError, match="fit the training data"):
        inductive_bias_bits(lambda rng: (1.0, 0.0), 10, 0.1)
    with pytest.raises(ValueError, match="intrinsic_dim"):
        intrinsic_dim_task(5, 3, 10, 10)


def test_probe_on_the_intrinsic_dim_task_and_ambient_invariance():
    """The probe measures the task's data (the model is not used); rotating the same data into
    more ambient dimensions leaves the random-feature class, hence its test errors, unchanged in
    distribution."""
    from genlab.errors import SpecError
    from genlab.models import MODELS
    from genlab.probes import PROBES, EvalContext
    from genlab.tasks import TASKS

    t, p = TASKS.get("intrinsic_dim"), PROBES.get("inductive_bias")
    data = t.obj(t.params(intrinsic_dim=2, ambient_dim=8, n_train=32, n_test=200), 0)
    model = MODELS.get("mlp").obj(MODELS.get("mlp").params(width=4, depth=1), data.info)
    out = p.obj(model, EvalContext(model, data, 0), p.params(hypotheses=40, width=64))
    assert out[("test/heldout", "fit_share")] == 1.0
    assert 0 < out[("test/heldout", "inductive_bias_bits")] < 60
    x, y, xt, yt = intrinsic_dim_task(3, 3, 32, 300, seed=1)
    q = np.linalg.qr(np.random.default_rng(2).standard_normal((12, 3)))[0]

    def mean_error(rot: np.ndarray) -> float:
        sample = random_feature_sampler(x @ rot.T, y, xt @ rot.T, yt, width=64)
        return float(np.mean([sample(np.random.default_rng(s))[1] for s in range(60)]))

    assert mean_error(q) == pytest.approx(mean_error(np.eye(3)), abs=0.03)
    digits = TASKS.get("digits").obj(TASKS.get("digits").params(train_size=60), 0)
    with pytest.raises(SpecError, match="binary"):
        p.obj(model, EvalContext(model, digits, 0), p.params())
