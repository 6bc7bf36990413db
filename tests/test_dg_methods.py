"""Domain-generalization methods: each loss checked by hand on a tiny batch."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from genlab.errors import SpecError
from genlab.methods import METHODS
from genlab.methods._dg import sample_params
from genlab.methods.dg_irm import irm_penalty
from genlab.methods.dg_mixup import mixup_loss
from genlab.methods.dg_mldg import mldg_objective
from genlab.methods.dg_mmd import GAMMAS, coral_distance, mmd_distance
from genlab.methods.dg_rebias import hsic, nhsic
from genlab.tasks.base import TaskInfo

INFO2 = TaskInfo("classification", 2, (1,), extra={"train_envs": ["a", "b"]})
L_A, L_B = -math.log(3 / 4), -math.log(1 / 4)  # CE of constant logits [log 3, 0] for y = 0, 1


class Const(nn.Module):
    """Logits ``[log 3, 0]`` for every input; features = the input."""

    def __init__(self) -> None:
        super().__init__()
        self.classifier = nn.Linear(1, 2)
        with torch.no_grad():
            self.classifier.weight.zero_()
            self.classifier.bias.copy_(torch.tensor([math.log(3), 0.0]))

    def featurize(self, x: torch.Tensor) -> torch.Tensor:
        return x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.featurize(x))


def batches() -> dict:
    x = torch.zeros(4, 1)
    return {"a": (x, torch.zeros(4, dtype=torch.long)), "b": (x, torch.ones(4, dtype=torch.long))}


def build(name: str, **params):
    entry = METHODS.get(name)
    return entry.obj(entry.params.model_validate(params), INFO2)


def test_irm_penalty_by_hand():
    logits = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    y = torch.tensor([0, 0])
    e = math.e
    expected = -(1 / (e + 1)) * (2 * e**2 / (1 + e**2))  # (sum p z - z_y) on each half
    assert irm_penalty(logits, y).item() == pytest.approx(expected, rel=1e-5)


def test_irm_weight_anneals_and_rescales():
    m = build("irm", irm_lambda=100.0, irm_penalty_anneal_iters=0)
    model = m.wrap(Const())
    loss, logs = m.loss(model, batches())
    assert logs["nll"] == pytest.approx((L_A + L_B) / 2, rel=1e-5)
    assert loss.item() == pytest.approx((logs["nll"] + 100 * logs["penalty"]) / 101, rel=1e-5)


def test_vrex_by_hand():
    m = build("vrex", vrex_lambda=10.0, vrex_penalty_anneal_iters=0)
    loss, logs = m.loss(m.wrap(Const()), batches())
    mean, var = (L_A + L_B) / 2, ((L_A - L_B) / 2) ** 2
    assert loss.item() == pytest.approx(mean + 10 * var, rel=1e-5)


def test_groupdro_by_hand():
    m = build("groupdro", groupdro_eta=0.5)
    model = m.wrap(Const())
    loss, _ = m.loss(model, batches())
    qa, qb = 0.5 * math.exp(0.5 * L_A), 0.5 * math.exp(0.5 * L_B)
    expected = (qa * L_A + qb * L_B) / (qa + qb)
    assert loss.item() == pytest.approx(expected, rel=1e-5)
    assert model.dg_groupdro_q.sum().item() == pytest.approx(1.0)


def test_coral_and_mmd_by_hand():
    a, b = torch.tensor([[0.0], [2.0]]), torch.tensor([[1.0], [1.0]])
    assert coral_distance(a, b).item() == pytest.approx(4.0)  # equal means; var 2 vs 0
    one, two = torch.tensor([[0.0]]), torch.tensor([[1.0]])
    expected = 2 * len(GAMMAS) - 2 * sum(math.exp(-g) for g in GAMMAS)
    assert mmd_distance(one, two).item() == pytest.approx(expected, rel=1e-5)
    m = build("coral", mmd_gamma=0.5)
    x = {"a": (a, torch.zeros(2, dtype=torch.long)), "b": (b, torch.ones(2, dtype=torch.long))}
    loss, logs = m.loss(m.wrap(Const()), x)
    assert logs["penalty"] == pytest.approx(4.0)
    assert loss.item() == pytest.approx((L_A + L_B) / 2 + 0.5 * 4.0, rel=1e-5)


def test_mixup_loss_by_hand():
    b = batches()
    loss = mixup_loss(Const(), b["a"], b["b"], 0.3)
    assert loss.item() == pytest.approx(0.3 * L_A + 0.7 * L_B, rel=1e-5)


def test_mldg_first_order_gradient():
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    bs = [(torch.randn(5, 3), torch.randint(0, 2, (5,))) for _ in range(2)]
    obj = mldg_objective(model, bs, [(0, 1)], inner_lr=0.1, beta=2.0)
    obj.backward()
    got = [p.grad.clone() for p in model.parameters()]
    # by hand: grad L_0(theta) + beta * grad L_1 at theta' = theta - lr * grad L_0(theta)
    ce = nn.functional.cross_entropy
    g0 = torch.autograd.grad(ce(model(bs[0][0]), bs[0][1]), list(model.parameters()))
    w, b = (p.detach() - 0.1 * g for p, g in zip(model.parameters(), g0, strict=True))
    w.requires_grad_(True)
    b.requires_grad_(True)
    g1 = torch.autograd.grad(ce(bs[1][0] @ w.T + b, bs[1][1]), [w, b])
    for gg, a0, a1 in zip(got, g0, g1, strict=True):
        assert torch.allclose(gg, a0 + 2.0 * a1, atol=1e-6)


def test_hsic_two_points_by_hand():
    k = torch.tensor([[1.0, 0.3], [0.3, 1.0]])
    ell = torch.tensor([[1.0, 0.6], [0.6, 1.0]])
    assert hsic(k, ell).item() == pytest.approx((1 - 0.3) * (1 - 0.6))  # tr(KHLH)/(n-1)^2
    z = torch.randn(8, 3)
    assert nhsic(z, z).item() == pytest.approx(1.0, abs=1e-5)


def test_two_env_methods_refuse_one_env():
    one = TaskInfo("classification", 2, (1,), extra={"train_envs": ["only"]})
    for name in ("irm", "vrex", "mmd", "coral", "mixup", "mldg"):
        entry = METHODS.get(name)
        with pytest.raises(ValueError, match="at least 2 training environments"):
            entry.obj(entry.params(), one)


def test_feature_methods_refuse_featureless_model():
    m = build("coral")
    with pytest.raises(SpecError, match="features"):
        m.wrap(nn.Sequential(nn.Linear(1, 2)))


def test_random_ranges_reproducible_and_in_range():
    for name in (
        "irm",
        "vrex",
        "groupdro",
        "mmd",
        "coral",
        "mixup",
        "mldg",
        "rebias",
        "ridg",
        "dmg",
    ):
        cls = METHODS.get(name).obj
        a, b = sample_params(cls.RANGES, 3), sample_params(cls.RANGES, 3)
        assert a == b
        for key, (kind, lo, hi) in cls.RANGES.items():
            assert 10**lo - 1 <= a[key] <= 10**hi + 1 if kind != "uniform" else lo <= a[key] <= hi
        METHODS.get(name).params.model_validate(a)  # a draw is a valid params dict


def test_ridg_penalty_by_hand():
    from genlab.methods.dg_ridg import RIDG, RIDGParams

    m = RIDG(RIDGParams(ridg_reg=1.0, momentum=0.5), INFO2)
    model = m.wrap(Const())
    with torch.no_grad():
        model.classifier.weight.copy_(torch.tensor([[1.0], [2.0]]))
        model.classifier.bias.zero_()
    x = torch.tensor([[1.0], [3.0]])
    y = torch.zeros(2, dtype=torch.long)
    loss, logs = m.loss(model, {"a": (x, y)})
    # rationales [[1], [2]] and [[3], [6]]; class-0 mean [[2], [4]]; squared distances 1+4 each
    assert logs["penalty"] == pytest.approx(5.0)
    nll = nn.functional.cross_entropy(torch.tensor([[1.0, 2.0], [3.0, 6.0]]), y).item()
    assert loss.item() == pytest.approx(nll + 5.0, rel=1e-5)
    m.loss(model, {"a": (x * 0, y)})  # second batch: bank = 0.5 * old + 0.5 * 0
    assert model.dg_ridg_bank[0].flatten().tolist() == pytest.approx([1.0, 2.0])


def test_dmg_overlap_and_averaged_prediction():
    from genlab.methods.dg_dmg import soft_iou

    a, b = torch.tensor([1.0, 1.0, 0.0]), torch.tensor([0.0, 1.0, 1.0])
    assert soft_iou(a, b).item() == pytest.approx(1 / 3)
    m = build("dmg", dmg_lambda=2.0)
    model = m.wrap(Const())
    loss, logs = m.loss(model, batches())
    # masks start at 0.5 everywhere; features are 0, so logits stay [log 3, 0]; IoU = 0.25 / 0.75
    assert logs["overlap"] == pytest.approx(1 / 3)
    assert loss.item() == pytest.approx((L_A + L_B) / 2 + 2.0 / 3, rel=1e-5)
    out = model(torch.zeros(1, 1)).exp()
    assert out[0].tolist() == pytest.approx([0.75, 0.25])


@pytest.mark.parametrize(
    "method,model",
    [("irm", "mlp"), ("vrex", "mlp"), ("groupdro", "mlp"), ("mmd", "mlp"), ("coral", "cnn"),
     ("mixup", "mlp"), ("mldg", "cnn"), ("ridg", "cnn"), ("dmg", "mlp")],
)  # fmt: skip
def test_every_method_trains_end_to_end(tmp_path, method, model):
    from genlab.engine import run_spec
    from genlab.spec import load_run_spec
    from genlab.store import Store

    params = "{channels=[8], pool_every=1}" if model == "cnn" else "{width=16}"
    spec = load_run_spec("dg-colored", [f"method.name={method}", f"model.name={model}",
                                        f"model.params={params}", "steps=4", "eval.every=2",
                                        "checkpoint_every=2", "batch_size=8"])  # fmt: skip
    res = run_spec(spec, Store(tmp_path), progress=False)
    assert res.status == "done"
    assert 0 <= res.final["test/-90%:accuracy"] <= 1


def test_rebias_trains_and_evaluates_the_target_model(tmp_path):
    from genlab.engine import run_spec
    from genlab.spec import load_run_spec
    from genlab.store import Store

    spec = load_run_spec("dg-colored", ["task.name=cross_bias_digits", "task.params={}",
                                        "method.name=rebias", "model.name=cnn",
                                        "model.params={channels=[8], pool_every=1}", "steps=3",
                                        "batch_size=16"])  # fmt: skip
    res = run_spec(spec, Store(tmp_path), progress=False)
    assert res.status == "done" and "test/unbiased:accuracy" in res.final
