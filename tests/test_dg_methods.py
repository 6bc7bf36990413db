"""Domain-generalization methods: each loss checked by hand on a tiny batch."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from genlab.data import TaskInfo
from genlab.errors import SpecError
from genlab.methods import METHODS
from genlab.methods.dg_irm import irm_penalty
from genlab.methods.dg_mixup import mixup_loss
from genlab.methods.dg_mldg import mldg_objective
from genlab.methods.dg_mmd import GAMMAS, coral_distance, mmd_distance
from genlab.methods.dg_rebias import hsic, nhsic
from genlab.methods.dg_shared import sample_params

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


def test_irm_weight_anneals_without_rescaling_as_domainbed():
    m = build("irm", irm_lambda=100.0, irm_penalty_anneal_iters=1)
    model = m.wrap(Const())
    loss, logs = m.loss(model, batches())  # update 0: weight 1
    assert logs["nll"] == pytest.approx((L_A + L_B) / 2, rel=1e-5)
    assert loss.item() == pytest.approx(logs["nll"] + logs["penalty"], rel=1e-5)
    model.dg_updates += 1
    loss, logs = m.loss(model, batches())  # after the anneal: weight 100, no division
    assert loss.item() == pytest.approx(logs["nll"] + 100 * logs["penalty"], rel=1e-5)


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


def test_mldg_domainbed_step_is_a_fresh_adam_step_first_order():
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    bs = [(torch.randn(5, 3), torch.randint(0, 2, (5,))) for _ in range(2)]
    obj = mldg_objective(model, bs, [(0, 1)], inner_lr=0.1, beta=2.0, inner="adam")
    obj.backward()
    got = [p.grad.clone() for p in model.parameters()]
    # by hand: grad L_0(theta) + beta * grad L_1 at theta' = one step of a fresh torch Adam on L_0
    ce = nn.functional.cross_entropy
    clone = nn.Linear(3, 2)
    clone.load_state_dict(model.state_dict())
    g0 = torch.autograd.grad(ce(clone(bs[0][0]), bs[0][1]), list(clone.parameters()))
    opt = torch.optim.Adam(clone.parameters(), lr=0.1)
    for p, g in zip(clone.parameters(), g0, strict=True):
        p.grad = g.clone()
    opt.step()
    g1 = torch.autograd.grad(ce(clone(bs[1][0]), bs[1][1]), list(clone.parameters()))
    for gg, a0, a1 in zip(got, g0, g1, strict=True):
        assert torch.allclose(gg, a0 + 2.0 * a1, atol=1e-6)


def test_mldg_paper_step_is_sgd_on_the_meta_train_envs_second_order():
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    bs = [(torch.randn(5, 3), torch.randint(0, 2, (5,))) for _ in range(3)]
    obj = mldg_objective(model, bs, [(0, 2)], inner_lr=0.1, beta=2.0, inner="sgd")
    obj.backward()
    got = [p.grad.clone() for p in model.parameters()]
    ce = nn.functional.cross_entropy
    w, b = (p.detach().clone().requires_grad_(True) for p in model.parameters())
    f = (ce(bs[0][0] @ w.T + b, bs[0][1]) + ce(bs[1][0] @ w.T + b, bs[1][1])) / 2  # env 2 is test
    gw, gb = torch.autograd.grad(f, [w, b], create_graph=True)
    total = f + 2.0 * ce(bs[2][0] @ (w - 0.1 * gw).T + (b - 0.1 * gb), bs[2][1])
    want = torch.autograd.grad(total, [w, b])
    for gg, a in zip(got, want, strict=True):
        assert torch.allclose(gg, a, atol=1e-6)


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
    names = [e.name for e in METHODS.entries() if getattr(e.obj, "RANGES", None)]
    assert {"irm", "vrex", "groupdro", "mmd", "coral", "mixup", "mldg", "rebias", "ridg"} <= set(
        names
    )
    for name in names:
        cls = METHODS.get(name).obj
        a, b = sample_params(cls.RANGES, 3), sample_params(cls.RANGES, 3)
        assert a == b
        assert a != sample_params(cls.RANGES, 4)
        for key, (kind, lo, hi) in cls.RANGES.items():
            v = a[key]
            if kind == "uniform":
                assert lo <= v <= hi, (name, key, v)
            elif kind == "log10":
                assert 10**lo <= v <= 10**hi, (name, key, v)
            else:
                assert isinstance(v, int) and round(10**lo) <= v <= round(10**hi), (name, key, v)
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


def test_dmg_sampled_masks_follow_the_official_code():
    """``masks="sampled"``: hard 0/1 masks per example in training with a straight-through gradient
    to the mask probabilities; logits averaged over the soft masks at evaluation."""
    torch.manual_seed(0)
    m = build("dmg", dmg_lambda=0.0, masks="sampled")
    model = m.wrap(Const())
    logits = model.mask_logits.detach()
    assert ((logits >= 0) & (logits < 1)).all()  # random_uniform initialisation
    with torch.no_grad():
        model.classifier.weight.fill_(1.0)
    feats = torch.ones(64, 1)
    out = model.env_logits(feats, 0, sample=True)
    assert set((out[:, 0] - math.log(3)).round(decimals=5).tolist()) <= {0.0, 1.0}  # hard masks
    out.sum().backward()
    assert model.mask_logits.grad is not None and model.mask_logits.grad[0].abs().item() > 0
    with torch.no_grad():
        model.mask_logits.copy_(torch.tensor([[0.0], [math.log(3)]]))  # masks 0.5 and 0.75
    # eval: logits [log 3 + m, m] averaged over m in {0.5, 0.75}
    assert model(torch.ones(1, 1))[0].tolist() == pytest.approx([math.log(3) + 0.625, 0.625])


@pytest.mark.parametrize(
    "method,model",
    [
        ("irm", "mlp"),
        ("vrex", "mlp"),
        ("groupdro", "mlp"),
        ("mmd", "mlp"),
        ("coral", "cnn"),
        ("mixup", "mlp"),
        ("mldg", "cnn"),
        ("ridg", "cnn"),
        ("dmg", "mlp"),
        ("oat", "cnn"),
        ("lowrank", "mlp"),
        ("modify", "cnn"),
    ],
)
def test_every_method_trains_end_to_end(tmp_path, method, model):
    from genlab.engine import run_spec
    from genlab.engine.checkpoint import FINAL
    from genlab.engine.train import prepare
    from genlab.spec import load_run_spec
    from genlab.store import Store

    params = "{channels=[8], pool_every=1}" if model == "cnn" else "{width=16}"
    spec = load_run_spec(
        "dg-colored",
        [
            f"method.name={method}",
            f"model.name={model}",
            f"model.params={params}",
            "steps=4",
            "eval.every=2",
            "checkpoint_every=2",
            "batch_size=8",
        ],
    )
    store = Store(tmp_path)
    res = run_spec(spec, store, progress=False)
    assert res.status == "done"
    assert 0 <= res.final["test/-90%:accuracy"] <= 1
    start = dict(prepare(spec).model.named_parameters())  # same seed: the same initial model
    end = torch.load(store.run_dir(res.run_id) / FINAL, weights_only=True)["model"]
    moved = [k for k, v in start.items() if not torch.equal(v.detach(), end[k])]
    assert moved, f"{method}: four steps changed no weight"


def test_rebias_trains_and_evaluates_the_target_model(tmp_path):
    from genlab.engine import run_spec
    from genlab.spec import load_run_spec
    from genlab.store import Store

    spec = load_run_spec(
        "dg-colored",
        [
            "task.name=cross_bias_digits",
            "task.params={}",
            "method.name=rebias",
            "model.name=cnn",
            "model.params={channels=[8], pool_every=1}",
            "steps=3",
            "batch_size=16",
        ],
    )
    res = run_spec(spec, Store(tmp_path), progress=False)
    assert res.status == "done" and "test/unbiased:accuracy" in res.final


def test_oat_uniform_target_loss_by_hand():
    from genlab.methods.dg_oat import OAT, OATParams, ood_images, uniform_ce

    assert uniform_ce(torch.tensor([[math.log(3), 0.0]])).item() == pytest.approx((L_A + L_B) / 2)
    info = TaskInfo("classification", 2, (1, 4, 4))
    model = nn.Sequential(nn.Flatten(), nn.Linear(16, 2))
    with torch.no_grad():
        model[1].weight.zero_()
        model[1].bias.copy_(torch.tensor([math.log(3), 0.0]))
    m = OAT(OATParams(oat_lambda=2.0, ood_batch=5), info)
    model = m.wrap(model)
    x, y = torch.zeros(3, 1, 4, 4), torch.zeros(3, dtype=torch.long)
    loss, _ = m.loss(model, {"a": (x, y)})
    assert loss.item() == pytest.approx(L_A + 2.0 * (L_A + L_B) / 2, rel=1e-5)
    g = torch.Generator().manual_seed(0)
    imgs = ood_images(30, (3, 8, 8), g)
    assert imgs.shape == (30, 3, 8, 8) and imgs.min() >= 0 and imgs.max() <= 1
    assert torch.equal(imgs, ood_images(30, (3, 8, 8), torch.Generator().manual_seed(0)))


def test_lowrank_env_heads_by_hand():
    m = build("lowrank", rank=1)
    model = m.wrap(Const())
    with torch.no_grad():
        model.u.copy_(torch.tensor([[[1.0], [0.0]], [[0.0], [2.0]]]))  # (envs, classes, rank)
        model.v.copy_(torch.tensor([[[3.0]], [[1.0]]]))  # (envs, features, rank)
    f = torch.tensor([[1.0]])
    # env a: W + u v^T = [[3], [0]]; env b: [[0], [2]]; shared W = 0, bias [log 3, 0]
    assert model.env_logits(f, 0).tolist()[0] == pytest.approx([3 + math.log(3), 0.0])
    assert model.env_logits(f, 1).tolist()[0] == pytest.approx([math.log(3), 2.0])
    assert model(f).tolist()[0] == pytest.approx([math.log(3), 0.0])  # test time: shared only
    loss, _ = m.loss(model, batches())  # features are 0 in batches(): every head is the shared one
    assert loss.item() == pytest.approx((L_A + L_B) / 2, rel=1e-5)


def test_modify_shuffle_and_schedule_by_hand():
    from genlab.methods.dg_modify import MoDify, MoDifyParams, rgb_shuffle

    x = torch.arange(2 * 3).float().reshape(2, 3, 1, 1)
    s = rgb_shuffle(x, torch.Generator().manual_seed(0))
    assert sorted(s[0].flatten().tolist()) == [0.0, 1.0, 2.0]  # a permutation per image
    info = TaskInfo("classification", 2, (2, 1, 1))
    model = nn.Sequential(nn.Flatten(), nn.Linear(2, 2))
    with torch.no_grad():
        model[1].weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
        model[1].bias.zero_()
    m = MoDify(MoDifyParams(modify_lambda=1.0, tolerance=0.0, momentum=0.5), info)
    model = m.wrap(model)
    # one image, channels (2, 0), label 0: the original is easy, the shuffled one (0, 2) hard
    xb, yb = torch.tensor([[[[2.0]], [[0.0]]]]), torch.tensor([0])
    ce = -torch.log_softmax(torch.tensor([2.0, 0.0]), 0)[0].item()
    torch.manual_seed(1)
    loss, logs = m.loss(model, {"a": (xb, yb)})
    assert model.dg_capability.item() == pytest.approx(ce)  # first batch: capability = its loss
    # whether kept or not, the loss is ce (+ the augmented ce when it is not harder than ce)
    aug = xb.flip(1) if logs["kept"] == 0 else xb
    aug_ce = -torch.log_softmax(model(aug)[0], 0)[0].item()
    assert loss.item() == pytest.approx(ce + (aug_ce if logs["kept"] else 0.0), rel=1e-5)


def test_repr_distill_loss_by_hand():
    from genlab.methods.dg_distill import ReprDistill, core_teacher

    x = torch.tensor([[1.0, -2.0, 5.0]])
    assert core_teacher(x, 2).tolist() == [[1.0, 0.0, 0.0, 2.0]]
    info = TaskInfo("classification", 2, (1,), extra={"core_dims": 1})
    entry = METHODS.get("repr_distill")
    m = ReprDistill(entry.params(distill_weight=2.0), info)
    model = m.wrap(Const())
    with torch.no_grad():
        model.to_teacher.weight.zero_()
        model.to_teacher.bias.copy_(torch.tensor([1.0, 0.0]))
    xb, yb = torch.tensor([[3.0], [-1.0]]), torch.tensor([0, 0])
    loss, logs = m.loss(model, {"id": (xb, yb)})
    # teacher [[3, 0], [0, 1]] vs prediction [1, 0]: squared errors 4, 0, 1, 1 -> mean 1.5
    assert logs["mse"] == pytest.approx(1.5)
    head = nn.functional.cross_entropy(model.classifier(xb), yb).item()
    assert loss.item() == pytest.approx(2.0 * 1.5 + head, rel=1e-5)
    with pytest.raises(ValueError, match="core_dims"):
        ReprDistill(entry.params(), INFO2)


def test_mnist_cnn_is_domainbeds_architecture():
    from genlab.models import MODELS

    entry = MODELS.get("mnist_cnn")
    info = TaskInfo("classification", 2, (2, 28, 28))
    model = entry.obj(entry.params(), info)
    convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.stride[0]) for c in convs] == [
        (2, 64, 1),
        (64, 128, 2),
        (128, 128, 1),
        (128, 128, 1),
    ]
    for block in model.blocks:  # conv -> ReLU -> GroupNorm(8), in DomainBed's order
        assert [type(m) for m in block] == [nn.Conv2d, nn.ReLU, nn.GroupNorm]
        assert block[2].num_groups == 8
    x = torch.randn(3, 2, 28, 28)
    assert [f.shape[1] for f in model.block_features(x)] == [64, 128, 128, 128]
    assert model.featurize(x).shape == (3, 128) and model(x).shape == (3, 2)
    assert sum(p.numel() for p in model.parameters()) == 371_394
    with pytest.raises(ValueError, match="multiple of 8"):
        entry.params(channels=[64, 128, 128, 12])
