"""The digits task (noisy and random labels) and the robust-mean method."""

from __future__ import annotations

import pytest
import torch
from scipy.stats.mstats import winsorize

from genlab.errors import SpecError
from genlab.methods import METHODS
from genlab.methods.robust_mean import winsorised_mean
from genlab.models import MODELS
from genlab.spec import parse_spec
from genlab.tasks import TASKS


def build(**kw):
    e = TASKS.get("digits")
    return e.obj(e.params(**kw), kw.pop("data_seed", 0) if "data_seed" in kw else 0)


def test_noise_rate_mask_and_clean_test():
    clean, noisy = build(train_size=500), build(train_size=500, label_noise=0.2)
    a, b = clean.train["main"], noisy.train["main"]
    assert torch.equal(a.x, b.x)
    changed = a.y != b.y
    assert torch.equal(changed, b.meta["noisy"])
    assert changed.sum() == 100
    assert torch.equal(clean.test["heldout"].y, noisy.test["heldout"].y)
    assert len(noisy.test["heldout"]) == 1797 - 500


def test_random_labels_and_determinism():
    r = build(random_labels=True).train["main"]
    assert 0.8 < r.meta["noisy"].float().mean() < 0.95  # ~90% differ from the truth
    e = TASKS.get("digits")
    one, two = e.obj(e.params(), 1), e.obj(e.params(), 1)
    assert torch.equal(one.train["main"].y, two.train["main"].y)
    assert not torch.equal(one.train["main"].y, e.obj(e.params(), 2).train["main"].y)


@pytest.mark.parametrize(
    "params, field",
    [
        ({"label_noise": 1.5}, "label_noise"),
        ({"train_size": 1790}, "train_size"),
        ({"label_noise": 0.1, "random_labels": True}, "random_labels"),
    ],
)
def test_bad_params_name_the_field(params, field):
    with pytest.raises(SpecError, match=field):
        parse_spec(
            {"task": {"name": "digits", "params": params}, "model": {"name": "mlp"}, "steps": 1}
        )


def test_winsorised_mean_matches_scipy():
    g = torch.randn(20, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    want = torch.tensor(winsorize(g.numpy(), limits=(2 / 20, 2 / 20), axis=0).mean(0))
    assert torch.allclose(winsorised_mean(g, 2), want)
    assert torch.allclose(winsorised_mean(g, 0), g.mean(0))


def test_robust_mean_with_c0_is_an_erm_step():
    data = build(train_size=100).to(torch.float64)
    m = MODELS.get("mlp")
    x, y = data.train["main"].x, data.train["main"].y
    steps = []
    for name, params in (("erm", {}), ("robust_mean", {"c": 0})):
        torch.manual_seed(0)
        model = m.obj(m.params(width=8, depth=1), data.info).to(torch.float64)
        e = METHODS.get(name)
        method = e.obj(e.params(**params), data.info)
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        method.step(model, opt, {"main": (x, y)})
        steps.append(torch.cat([p.detach().reshape(-1) for p in model.parameters()]))
    assert torch.allclose(steps[0], steps[1], atol=1e-10)


def test_placebo_mask_marks_as_many_unchanged_labels():
    noisy = build(train_size=500, label_noise=0.2).train["main"]
    placebo = build(train_size=500, label_noise=0.2, noise_mask="placebo").train["main"]
    assert torch.equal(noisy.y, placebo.y) and placebo.meta["noisy"].sum() == 100
    assert not (placebo.meta["noisy"] & noisy.meta["noisy"]).any()
