"""Prediction ensembles: Kneser-Ney by hand, EM interpolation weights, perplexity, token
probabilities of a model, linear probes and the model-zoo analysis (#69, #77, #48)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from genlab.ensembles.kneser_ney import KneserNey
from genlab.ensembles.predictions import em_weights, mixture, perplexity, target_probs
from genlab.ensembles.probe import SoftmaxProbe, linear_probe
from genlab.ensembles.zoo import shift_estimates, zoo_dg
from genlab.tasks import TASKS


def test_kneser_ney_normalises_and_matches_a_hand_bigram():
    stream = [0, 1, 0, 1, 0, 2, 0, 1]
    kn = KneserNey(2, 4).fit(stream)
    for ctx in ([0], [1], [2], [3], []):
        assert kn.distribution(ctx).sum().item() == pytest.approx(1.0)
    # bigram counts after 0: {1: 3, 2: 1}; n1 = 3 bigram types seen once ((1,0) twice, (0,1) x3)
    d2 = kn.discount[1]
    counts = {(0, 1): 3, (1, 0): 2, (0, 2): 1, (2, 0): 1}
    n1 = sum(c == 1 for c in counts.values())
    n2 = sum(c == 2 for c in counts.values())
    assert d2 == pytest.approx(n1 / (n1 + 2 * n2))
    # unigram continuation counts: 0 follows {1, 2}, 1 follows {0}, 2 follows {0}
    d1 = kn.discount[0]
    p_uni_1 = max(1 - d1, 0) / 4 + d1 * 3 / 4 * (1 / 4)
    expected = (3 - d2) / 4 + d2 * 2 / 4 * p_uni_1
    assert kn.prob([0], 1) == pytest.approx(expected)
    assert kn.prob([3], 3) > 0  # unseen context and token: uniform floor


def test_em_weights_maximise_dev_likelihood_and_perplexity():
    torch.manual_seed(0)
    p = torch.rand(3, 400) * 0.5 + 0.01
    p[1, :200] = 0.9  # model 1 is excellent on half the tokens
    w = em_weights(p)
    best = mixture(p, w).log().mean()
    for _ in range(200):
        r = torch.distributions.Dirichlet(torch.ones(3)).sample().double()
        assert mixture(p, r).log().mean() <= best + 1e-9
    assert w.sum().item() == pytest.approx(1.0)
    assert perplexity(torch.full((10,), 0.25)) == pytest.approx(4.0)


def test_target_probs_of_a_sequence_model():
    class Uniformish(nn.Module):
        def forward(self, x):
            out = torch.zeros(*x.shape, 3)
            out[..., 0] = math.log(2.0)  # p = (1/2, 1/4, 1/4)
            return out

    x = torch.zeros(2, 3, dtype=torch.long)
    y = torch.tensor([[0, 1, -100], [2, 0, 0]])
    probs = target_probs(Uniformish(), x, y)
    assert probs.tolist() == pytest.approx([0.5, 0.25, 0.25, 0.5, 0.5])


def test_softmax_probe_separates_and_linear_probe_scores_splits():
    torch.manual_seed(0)
    x = torch.randn(200, 2)
    y = (x[:, 0] > 0).long()
    assert (SoftmaxProbe(2).fit(x, y).predict(x) == y).float().mean() > 0.97
    e = TASKS.get("digits")
    data = e.obj(e.params(train_size=300, val_size=100), 0)
    pixels = nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.Linear(64, 10))
    with torch.no_grad():
        pixels[1].weight.copy_(torch.eye(64))
        pixels[1].bias.zero_()
    pixels.featurize = lambda t: pixels[1](pixels[0](t))  # type: ignore[attr-defined]
    acc = linear_probe(pixels, data)
    assert set(acc) == {"val/main", "test/heldout"} and acc["test/heldout"] > 0.85


def test_shift_estimates_tell_shifted_from_identical_domains():
    torch.manual_seed(0)
    y = torch.randint(0, 2, (300,))
    base = torch.randn(300, 2) + y[:, None] * 2.0
    same = {"a": (base[:150], y[:150], base[150:225]), "b": (base[150:], y[150:], base[225:])}
    far = {"a": same["a"], "b": (base[150:] + 30.0, y[150:], base[225:] + 30.0)}
    flip = {"a": same["a"], "b": (base[150:], 1 - y[150:], base[225:])}
    div_same, cor_same = shift_estimates(same, 2)
    div_far, _ = shift_estimates(far, 2)
    _, cor_flip = shift_estimates(flip, 2)
    assert div_same < 0.2 < div_far and cor_same < 0.3 < cor_flip


def test_zoo_dg_combines_members():
    e = TASKS.get("rotated_digits")
    data = e.obj(e.params(test_envs=[2, 3, 4, 5]), 0)  # two source domains
    torch.manual_seed(0)
    members = {}
    for name in ("a", "b"):
        net = nn.Sequential(nn.Flatten(), nn.Linear(64, 16), nn.ReLU(), nn.Linear(16, 10))
        net.featurize = net[:3]  # type: ignore[attr-defined]
        members[name] = net
    res = zoo_dg(members, data)
    assert list(res.members["member"]) == ["a", "b"] and res.best in ("a", "b")
    assert res.members["weight"].sum() == pytest.approx(1.0)
    assert set(res.combined) == {"em", "uniform", "concat"}
    assert all(0 <= v <= 1 for v in res.combined.values())
    assert set(res.per_split) == set(data.test)  # one row per held-out domain
    for accs in res.per_split.values():
        assert set(accs) == {"em", "uniform", "concat", "best", "oracle"}
        assert accs["oracle"] >= accs["best"]
