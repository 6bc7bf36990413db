"""Feature diversity (#81) and its SimCLR substrate: the diversity measure on hand-made features,
NT-Xent against a brute-force loop, the augmentation, one training step, and bad input."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from genlab.methods import METHODS
from genlab.methods.simclr import augment, nt_xent
from genlab.models import MODELS
from genlab.probes import PROBES, EvalContext
from genlab.probes.diversity import diversity
from genlab.tasks import TASKS


def test_diversity_of_known_features():
    same = torch.rand(50, 1).repeat(1, 4)  # four neurons firing alike
    assert diversity(same)[0] == pytest.approx(0.0, abs=1e-6)
    eye = torch.eye(6)  # orthogonal firing patterns
    assert diversity(eye)[0] == pytest.approx(1.0)
    two = torch.tensor([[1.0, 1.0], [0.0, 1.0]])  # cos 45 degrees
    assert diversity(two)[0] == pytest.approx(1 - 1 / math.sqrt(2))
    with_dead = torch.cat([eye, torch.zeros(6, 2)], 1)  # silent neurons left out, counted
    d, dead = diversity(with_dead)
    assert d == pytest.approx(1.0) and dead == pytest.approx(0.25)
    assert math.isnan(diversity(torch.zeros(5, 3))[0])


def test_nt_xent_matches_a_loop():
    g = torch.Generator().manual_seed(0)
    z1, z2 = torch.randn(5, 3, generator=g), torch.randn(5, 3, generator=g)
    z = nn.functional.normalize(torch.cat([z1, z2]), dim=1)
    t, n, total = 0.3, 5, 0.0
    for i in range(2 * n):
        j = (i + n) % (2 * n)
        others = [k for k in range(2 * n) if k != i]
        denom = sum(math.exp(float(z[i] @ z[k]) / t) for k in others)
        total += -(float(z[i] @ z[j]) / t - math.log(denom))
    assert nt_xent(z1, z2, t).item() == pytest.approx(total / (2 * n), rel=1e-5)


def test_augment_shifts_each_image_within_bounds():
    torch.manual_seed(0)
    x = torch.zeros(40, 1, 8, 8)
    x[:, 0, 3, 4] = 1.0  # one lit pixel
    out = augment(x, shift=1, noise=0.0)
    assert out.shape == x.shape and torch.all(out.sum((1, 2, 3)) == 1)
    pos = out[:, 0].flatten(1).argmax(1)
    rows, cols = pos // 8, pos % 8
    assert rows.sub(3).abs().max() <= 1 and cols.sub(4).abs().max() <= 1
    assert len(set(zip(rows.tolist(), cols.tolist(), strict=True))) > 1  # per-image offsets
    assert torch.equal(augment(x, 0, 0.0), x)


def test_simclr_trains_the_encoder_and_head_and_rejects_bad_input():
    e = TASKS.get("digits")
    d = e.obj(e.params(train_size=64), 0)
    m = MODELS.get("cnn")
    torch.manual_seed(0)
    model = m.obj(m.params(channels=[4, 4]), d.info)
    me = METHODS.get("simclr")
    meth = me.obj(me.params(proj_dim=8), d.info)
    model = meth.wrap(model)
    assert hasattr(model, "simclr_head")
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    logs = meth.step(model, opt, {"main": (d.train["main"].x, d.train["main"].y)})
    assert math.isfinite(logs["loss"]) and logs["loss"] > 0
    after = model.state_dict()
    assert not torch.equal(before["blocks.0.0.weight"], after["blocks.0.0.weight"])
    assert not torch.equal(before["simclr_head.0.weight"], after["simclr_head.0.weight"])
    assert torch.equal(before["classifier.weight"], after["classifier.weight"])  # labels unused
    mlp = MODELS.get("mlp")
    with pytest.raises(ValueError, match="featurize"):
        meth.wrap(mlp.obj(mlp.params(width=4, depth=1), d.info))


def test_feature_diversity_probe():
    e = TASKS.get("digits")
    d = e.obj(e.params(train_size=100), 0)
    m = MODELS.get("cnn")
    torch.manual_seed(0)
    model = m.obj(m.params(channels=[4, 6, 8]), d.info)
    p = PROBES.get("feature_diversity")
    out = p.obj(model, EvalContext(model, d, 3), p.params(max_samples=50))
    assert out[("model", "n_diversity_layers")] == 3
    for i in range(3):
        assert 0 <= out[("test/heldout", f"layer{i}_diversity")] <= 1
        assert 0 <= out[("test/heldout", f"layer{i}_dead")] <= 1
