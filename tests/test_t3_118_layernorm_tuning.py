"""``dg.layernorm_tuning`` (#118, GenD): the ``vit_tiny`` model, the ``gend`` method and the
claim's decision on synthetic tables."""

from __future__ import annotations

import pytest
import torch

from genlab.claims import CLAIMS
from genlab.data import TaskInfo
from genlab.errors import SpecError
from genlab.methods.dg_gend import GenD, GenDParams, alignment, trainable_share, uniformity
from genlab.models.mlp import MLP, MLPParams
from genlab.models.vit_tiny import ViTTiny, ViTTinyParams, layernorm_names

INFO = TaskInfo(kind="classification", n_outputs=10, input_shape=(3, 8, 8), chance=0.1)
CLAIM = CLAIMS.get("dg.layernorm_tuning").obj


def _vit(seed: int = 0, **kw) -> ViTTiny:
    torch.manual_seed(seed)
    return ViTTiny(ViTTinyParams(d_model=16, heads=2, **kw), INFO)


def test_vit_shapes_and_determinism():
    x = torch.rand(5, 3, 8, 8)
    a, b = _vit(), _vit()
    assert a(x).shape == (5, 10) and a.featurize(x).shape == (5, 16)
    assert torch.equal(a(x), b(x))
    assert not torch.equal(a(x), _vit(seed=1)(x))
    assert len(layernorm_names(a)) == 2 * (2 * 2 + 1)  # weight and bias: 2 per block + final


def test_vit_rejects_bad_inputs():
    with pytest.raises(ValueError, match="patch"):
        ViTTiny(ViTTinyParams(patch=3), INFO)
    with pytest.raises(ValueError, match="multiple of heads"):
        ViTTiny(ViTTinyParams(d_model=10, heads=4), INFO)
    seq = TaskInfo(kind="classification", n_outputs=2, input_shape=(8,), chance=0.5)
    with pytest.raises(ValueError, match="images"):
        ViTTiny(ViTTinyParams(), seq)


def test_gend_trains_layernorm_and_head_only():
    model = GenD(GenDParams(), INFO).wrap(_vit())
    names = {n for n, q in model.named_parameters() if q.requires_grad}
    base = model.base
    assert names == {f"base.{n}" for n in layernorm_names(base)} | {
        "base.classifier.weight",
        "base.classifier.bias",
    }
    assert 0 < trainable_share(model) < 0.2
    full = GenD(GenDParams(tune="all"), INFO).wrap(_vit())
    assert trainable_share(full) == 1.0


def test_gend_step_moves_only_trainable_parameters():
    method = GenD(GenDParams(), INFO)
    model = method.wrap(_vit())
    before = {n: q.detach().clone() for n, q in model.named_parameters()}
    opt = torch.optim.AdamW([q for q in model.parameters() if q.requires_grad], lr=1e-2)
    x, y = torch.rand(16, 3, 8, 8), torch.arange(16) % 10
    logs = method.step(model, opt, {"main": (x, y)})
    assert {"loss", "ce", "align", "uniform"} <= set(logs)
    for n, q in model.named_parameters():
        assert torch.equal(q, before[n]) != q.requires_grad, n


def test_gend_refuses_a_model_without_layernorm():
    mlp = MLP(MLPParams(width=8, depth=1), INFO)
    with pytest.raises(ValueError, match="LayerNorm"):
        GenD(GenDParams(), INFO).wrap(mlp)
    GenD(GenDParams(tune="all"), INFO).wrap(mlp)  # every parameter: any model with a head


def test_metric_losses():
    z = torch.nn.functional.normalize(torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), dim=1)
    assert alignment(z, torch.tensor([0, 0, 1])).item() == pytest.approx(0.0)
    assert alignment(z, torch.tensor([0, 1, 0])).item() == pytest.approx(2.0)
    assert alignment(z, torch.tensor([0, 1, 2])).item() == 0.0  # no same-class pair
    spread = uniformity(torch.eye(4))
    same = uniformity(torch.ones(4, 4) / 2)
    assert spread.item() < same.item() == pytest.approx(0.0)


def test_claim_arms_share_pretraining_and_head():
    cfg = CLAIM.config("smoke")
    arms = CLAIM.arms(cfg)
    assert [a.labels["arm"] for a in arms] == ["pre", "gend", "full"] * cfg.seeds
    pre, gend, full = arms[:3]
    for ft in (gend, full):
        assert ft.spec.model.params["run"] == pre.spec.run_id
        assert ft.spec.task.params["test_envs"] == [0, 1, 3, 4]
    assert (
        gend.spec.method.params["tune"] == "layernorm" and full.spec.method.params["tune"] == "all"
    )
    assert pre.spec.task.params["test_envs"] == [1, 2, 3, 4]


@pytest.mark.parametrize(
    ("case", "verdict"),
    [("effect", "reproduced"), ("null", "not reproduced"), ("unfit", "inconclusive")],
)
def test_decision_on_synthetic_tables(case, verdict):
    cfg = CLAIM.config("full")
    assert CLAIM.evaluate(cfg, CLAIM.synthetic_table(cfg, case)).verdict == verdict


@pytest.mark.parametrize("control", ["negative", "positive"])
def test_controls_reach_both_decisions(control):
    cfg = CLAIM.config("full", control=control)
    got = {CLAIM.evaluate(cfg, CLAIM.synthetic_table(cfg, c)).verdict for c in ("effect", "null")}
    assert got == {"reproduced", "not reproduced"}


@pytest.mark.parametrize(
    "bad", [{"ft_env": 0}, {"heldout_envs": [2, 3]}, {"pre_envs": [7]}, {"seeds": 1}, {"ln_lr": 0}]
)
def test_bad_params_are_named(bad):
    with pytest.raises(SpecError, match="claim"):
        CLAIM.config("full", bad)
