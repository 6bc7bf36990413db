"""function_complexity (#85): the measures on known maps, the probe on a model, the claim and its
negative control."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from genlab.errors import SpecError
from genlab.models import MODELS
from genlab.probes import PROBES, EvalContext
from genlab.probes.complexity import (
    Arch,
    fourier_complexity,
    lz76,
    lz_complexity,
    sample_complexity,
)
from genlab.tasks import TASKS


def test_lz76_known_parsings():
    # Kaspar & Schuster's example: 0 | 001 | 10 | 100 | 1000 | 101
    assert lz76(np.array([int(c) for c in "0001101001000101"])) == 6
    assert lz76(np.zeros(64, dtype=int)) == 2
    assert lz76(np.array([0, 1] * 32)) == 3


def test_fourier_and_lz_order_known_maps():
    t = np.linspace(-1, 1, 32)
    u, v = np.meshgrid(t, t, indexing="ij")
    smooth, wiggly = np.sin(np.pi * u), np.sin(8 * np.pi * (u + v))
    noise = np.random.default_rng(0).standard_normal((32, 32))
    assert fourier_complexity(np.ones((32, 32))) == 0.0
    f = [fourier_complexity(m) for m in (smooth, wiggly, noise)]
    assert f[0] < 0.1 < f[1] < f[2] and f[2] > 0.45
    z = [lz_complexity(m) for m in (smooth, wiggly, noise)]
    assert z[0] < 0.3 and z[0] < z[1] < z[2] and z[2] > 0.8


def test_sample_complexity_is_seeded():
    a = sample_complexity(Arch("tanh", depth=2, width=16, scale=4), 3, seed=1, grid=16)
    b = sample_complexity(Arch("tanh", depth=2, width=16, scale=4), 3, seed=1, grid=16)
    np.testing.assert_array_equal(a["fourier"], b["fourier"])
    with pytest.raises(ValueError, match="scale"):
        sample_complexity(Arch(scale=0), 1)


def test_probe_on_digits_and_bad_input():
    e = TASKS.get("digits")
    data = e.obj(e.params(train_size=60), 0)
    m = MODELS.get("mlp")
    torch.manual_seed(0)
    model = m.obj(m.params(width=16, depth=1), data.info)
    p = PROBES.get("function_complexity")
    out = p.obj(model, EvalContext(model, data, 0), p.params(grid=8, planes=2))
    assert set(out) == {("model", "fourier_complexity"), ("model", "lz_complexity")}
    assert all(0 <= v < 2 for v in out.values())
    with pytest.raises(SpecError, match="split"):
        p.obj(model, EvalContext(model, data, 0), p.params(split="nope"))


def test_grid_mode_scores_a_random_mlp_on_plane_grid():
    """The #85 protocol as a run: one random network per seed, scored on the task's own grid, with
    an i.i.d. noise map as the reference; a ReLU network is far simpler than the noise."""
    data = TASKS.get("plane_grid").obj(TASKS.get("plane_grid").params(grid=16), 0)
    m = MODELS.get("random_mlp")
    torch.manual_seed(0)
    model = m.obj(m.params(activation="relu", scale=4.0), data.info)
    p = PROBES.get("function_complexity")
    out = p.obj(model, EvalContext(model, data, 0), p.params(inputs="grid"))
    assert out[("model", "fourier_complexity")] < 0.5 * out[("model", "noise_fourier_complexity")]
    torch.manual_seed(0)
    again = m.obj(m.params(activation="relu", scale=4.0), data.info)
    assert all(
        torch.equal(a, b) for a, b in zip(model.parameters(), again.parameters(), strict=True)
    )
    digits = TASKS.get("digits").obj(TASKS.get("digits").params(train_size=60), 0)
    with pytest.raises(SpecError, match="square grid"):
        p.obj(model, EvalContext(model, digits, 0), p.params(inputs="grid"))
