"""The C6 diagnostic probes: closed forms agree with explicit per-sample gradients, bad input exits 2."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from genlab.errors import SpecError
from genlab.models import MODELS
from genlab.probes import PROBES, EvalContext
from genlab.probes._grads import last_linear, per_sample_grads
from genlab.probes.coherence import coherence_last_layer, coherence_of
from genlab.probes.gwa import excess_kurtosis, gwa_per_sample, noise_auroc
from genlab.probes.margins import deepfool_distance, principal_basis
from genlab.probes.sharpness import SharpnessParams, _Loss, sharpness_measures
from genlab.tasks import TASKS


@pytest.fixture(scope="module")
def setup():
    e = TASKS.get("digits")
    data = e.obj(e.params(train_size=200, label_noise=0.3), 0).to(torch.float64)
    m = MODELS.get("mlp")
    torch.manual_seed(0)
    model = m.obj(m.params(width=16, depth=1), data.info).to(torch.float64)
    opt = torch.optim.Adam(model.parameters(), 1e-2)
    x, y = data.train["main"].x, data.train["main"].y
    for _ in range(60):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return data, model


def head_grads(model, x, y):
    g = per_sample_grads(model, x, y)
    head = last_linear(model)
    return g[:, -(head.weight.numel() + head.bias.numel()) :], head


def test_gwa_closed_form_matches_per_sample_gradients(setup):
    data, model = setup
    x, y = data.train["main"].x[:50], data.train["main"].y[:50]
    gh, head = head_grads(model, x, y)
    w = torch.cat([head.weight.detach().reshape(-1), head.bias.detach()])
    cos = (-gh @ w) / (gh.norm(dim=1) * w.norm())
    assert torch.allclose(gwa_per_sample(model, x, y), cos, atol=1e-9)


def test_coherence_last_layer_matches_explicit(setup):
    data, model = setup
    x, y = data.train["main"].x[:50], data.train["main"].y[:50]
    gh, _ = head_grads(model, x, y)
    assert coherence_last_layer(model, x, y) == pytest.approx(coherence_of(gh), rel=1e-9)
    same = gh[:1].repeat(5, 1)
    assert coherence_of(same) == pytest.approx(1.0)
    assert coherence_of(torch.eye(8, dtype=torch.float64)) == pytest.approx(1 / 8)


def test_kurtosis_and_auroc():
    g = torch.Generator().manual_seed(0)
    assert abs(excess_kurtosis(torch.randn(200_000, generator=g))) < 0.05
    cos = torch.tensor([0.9, 0.8, 0.7, -0.1, -0.2])
    assert noise_auroc(cos, torch.tensor([0, 0, 0, 1, 1])) == 1.0
    assert noise_auroc(cos, torch.tensor([1, 1, 0, 0, 0])) == 0.0
    assert noise_auroc(cos, torch.zeros(5)) != noise_auroc(cos, torch.zeros(5))  # NaN


def test_hessian_measures_match_dense_hessian(setup):
    data, model = setup
    x, y = data.train["main"].x[:40], data.train["main"].y[:40]
    f = _Loss(model, x, y)
    shapes = [p.shape for p in f.params]
    flat = torch.cat([p.reshape(-1) for p in f.params])

    def loss_flat(v):
        parts, i = [], 0
        for s in shapes:
            n = torch.Size(s).numel()
            parts.append(v[i : i + n].reshape(s))
            i += n
        return f(parts)

    h = torch.autograd.functional.hessian(loss_flat, flat)
    ev = torch.linalg.eigvalsh(h)
    p = SharpnessParams(measures=["top_eig", "trace"], power_iters=100, hutchinson=200)
    got = sharpness_measures(model, x, y, p, torch.Generator().manual_seed(0))
    top = ev[ev.abs().argmax()].item()
    assert got["hessian_top_eig"] == pytest.approx(top, rel=1e-3)
    assert got["hessian_trace"] == pytest.approx(h.trace().item(), rel=0.2)
    sam = sharpness_measures(model, x, y, SharpnessParams(measures=["sam"]), torch.Generator())
    assert sam["sam_sharpness"] > 0


def test_deepfool_reaches_the_boundary_and_constrained_is_not_shorter(setup):
    data, model = setup
    model.eval()
    x = data.train["main"].x[:30]
    y = model(x).argmax(-1)
    d = deepfool_distance(model, x, y, None, 50, 0.02)
    assert not d.isnan().any() and (d > 0).all()
    basis = principal_basis(data.train["main"].x, 0.9)
    assert basis.shape[1] < 64
    dc = deepfool_distance(model, x, y, basis, 200, 0.02)
    ok = ~dc.isnan()
    assert ok.float().mean() > 0.8
    assert dc[ok].median() >= d[ok].median()


def test_probes_run_in_a_context_and_name_their_metrics(setup):
    data, model = setup
    ctx = EvalContext(model, data, step=3)
    names = {
        "gwa": {"gwa", "gwa_mean", "gwa_kurtosis", "gwa_noise_auroc"},
        "coherence": {"coherence"},
        "label_fit": {"noisy_fit", "clean_fit"},
        "sharpness": {"sam_sharpness", "asam_sharpness", "hessian_top_eig", "hessian_trace"},
        "margins": {"output_margin", "hidden_margin", "input_margin", "constrained_margin"},
    }
    for probe, metrics in names.items():
        e = PROBES.get(probe)
        params = e.params(max_samples=64) if "max_samples" in e.params.model_fields else e.params()
        out = e.obj(model, ctx, params)
        assert {m for s, m in out} == metrics
        assert {s for s, m in out} == {"train/main"}
        assert all(v == v for v in out.values())


class DataDependent(nn.Module):
    """A model whose control flow depends on the data: vmap cannot trace it."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(64, 10)
        self.scale = nn.Parameter(torch.ones(1))  # not in a linear layer: no fast path

    def forward(self, x):
        if x.sum() > 0:
            return self.scale * self.lin(x.flatten(1))
        return -self.lin(x.flatten(1))


def test_per_sample_gradients_on_an_unfit_model_is_a_spec_error(setup):
    data, _ = setup
    model = DataDependent().to(torch.float64)
    ctx = EvalContext(model, data, step=0)
    e = PROBES.get("coherence")
    with pytest.raises(SpecError, match="per-sample gradients"):
        e.obj(model, ctx, e.params(mode="full", max_samples=8))
    assert e.obj(model, ctx, e.params())  # the last-layer path needs no vmap


def test_no_linear_head_is_a_spec_error(setup):
    data, _ = setup
    ctx = EvalContext(nn.Flatten(), data, step=0)
    with pytest.raises(SpecError, match="nn.Linear"):
        PROBES.get("gwa").obj(ctx.model, ctx, PROBES.get("gwa").params())


def test_full_coherence_fast_path_matches_vmap(setup):
    from genlab.probes._grads import linear_sums, per_sample_sums

    data, model = setup
    x, y = data.train["main"].x[:40], data.train["main"].y[:40]
    fast, slow = linear_sums(model, x, y), per_sample_sums(model, x, y, chunk=16)
    assert fast is not None
    assert torch.allclose(fast[1], slow[1], rtol=1e-8)
    assert torch.allclose(fast[0].norm(), slow[0].norm(), rtol=1e-8)
    g = per_sample_grads(model, x, y)
    assert torch.allclose(slow[1], g.pow(2).sum(1), rtol=1e-8)
    assert linear_sums(DataDependent().to(torch.float64), x, y) is None  # a non-linear param
    assert linear_sums(nn.Sequential(nn.Flatten(), nn.Linear(64, 10)).double(), x, y) is not None
    emb = nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), nn.Linear(12, 3))
    assert linear_sums(emb, torch.zeros(2, 3, dtype=torch.long), torch.zeros(2).long()) is None


def test_bottom_subspace_is_the_least_variance_complement(setup):
    data, _ = setup
    x = data.train["main"].x
    top, bottom = principal_basis(x, 0.9), principal_basis(x, 0.9, "bottom")
    assert top.shape == bottom.shape
    assert (top.T @ bottom).abs().max() < 1e-5
    flat = x.flatten(1) - x.flatten(1).mean(0)
    assert (flat @ bottom).var(0).sum() < 0.05 * (flat @ top).var(0).sum()
