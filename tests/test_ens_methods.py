"""Methods and model options of clusters C5/C7: BANG's smoothing, SWA/EMA, SAM, Ghost BN, the
regime table, the weight-distance probe and UNIC distillation."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from genlab.data import TaskInfo
from genlab.derived.unic import teacher_drop_weights
from genlab.engine import run_spec
from genlab.errors import SpecError
from genlab.methods import METHODS
from genlab.methods.averaging import Averaged, WeightAveraging
from genlab.models.ghost_bn import GhostBatchNorm
from genlab.regime import apply_regime
from genlab.spec import parse_spec
from genlab.weights.load import load_model, plain_state

INFO = TaskInfo("classification", 3, (2,))
DIGITS = {
    "task": {"name": "digits", "params": {"train_size": 200}},
    "model": {"name": "mlp", "params": {"width": 16, "depth": 1}},
    "steps": 20,
    "batch_size": 50,
    "eval": {"every": 10, "log_points": 0},
}


def interrupted_then_resumed(spec, store, at: int) -> None:
    """Train ``spec`` into ``store``, killed (KeyboardInterrupt) at the evaluation of step ``at``,
    then resumed from its checkpoint with the probes' caches emptied."""
    from genlab.engine import train
    from genlab.probes import weight_distance as wd

    real = train.evaluate

    def boom(prep, step):
        if step == at:
            raise KeyboardInterrupt
        return real(prep, step)

    train.evaluate = boom
    try:
        with pytest.raises(KeyboardInterrupt):
            run_spec(spec, store, progress=False)
    finally:
        train.evaluate = real
    wd._INIT.clear()
    run_spec(spec, store, progress=False)


def method(name, **params):
    e = METHODS.get(name)
    return e.obj(e.params.model_validate(params), INFO)


def test_bang_is_label_smoothed_cross_entropy_without_mixup():
    m = method("bang", label_smoothing=0.3, mixup_alpha=0.0)
    model = nn.Linear(2, 3)
    x, y = torch.randn(5, 2), torch.tensor([0, 1, 2, 0, 1])
    loss, _ = m.loss(model, {"main": (x, y)})
    ref = nn.functional.cross_entropy(model(x), y, label_smoothing=0.3)
    assert loss.item() == pytest.approx(ref.item(), rel=1e-5)


def test_averaged_model_means_and_ema():
    net = nn.Linear(1, 1, bias=False)
    avg = Averaged(net)
    for v, _ in zip((1.0, 2.0, 6.0), range(3), strict=True):
        net.weight.data.fill_(v)
        avg.update(None)
    assert avg.average.weight.item() == pytest.approx(3.0)
    ema = Averaged(net)
    net.weight.data.fill_(0.0)
    ema.update(0.5)
    net.weight.data.fill_(4.0)
    ema.update(0.5)
    assert ema.average.weight.item() == pytest.approx(2.0)
    ema.eval()
    assert ema(torch.ones(1, 1)).item() == pytest.approx(2.0)  # evaluation uses the average
    plain = WeightAveraging.plain_state(ema.state_dict())
    assert set(plain) == {"weight"} and plain["weight"].item() == pytest.approx(2.0)


def test_swa_run_resumes_to_the_same_average(store, tmp_path):
    from genlab.store import Store

    spec = parse_spec(
        {**DIGITS, "method": {"name": "swa", "params": {"start": 5}}, "checkpoint_every": 7}
    )
    full = run_spec(spec, store, progress=False)
    other = Store(tmp_path / "other")
    interrupted_then_resumed(spec, other, at=10)
    state, again = plain_state(store, full.run_id), plain_state(other, full.run_id)
    assert set(state) == set(load_model(store, full.run_id).state_dict())
    for k in state:
        assert torch.allclose(state[k].float(), again[k].float(), atol=1e-6), k


def test_sam_step_matches_the_two_gradient_rule():
    torch.manual_seed(0)
    model = nn.Linear(2, 3)
    ref = nn.Linear(2, 3)
    ref.load_state_dict(model.state_dict())
    x, y = torch.randn(8, 2), torch.randint(0, 3, (8,))
    rho, lr = 0.1, 0.5
    m = method("sam", rho=rho)
    m.step(model, torch.optim.SGD(model.parameters(), lr=lr), {"main": (x, y)})
    loss = nn.functional.cross_entropy(ref(x), y)
    grads = torch.autograd.grad(loss, list(ref.parameters()))
    norm = torch.sqrt(sum(g.pow(2).sum() for g in grads))
    moved = [
        (p + rho * g / norm).detach().requires_grad_()
        for p, g in zip(ref.parameters(), grads, strict=True)
    ]
    out = nn.functional.linear(x, moved[0], moved[1])
    g2 = torch.autograd.grad(nn.functional.cross_entropy(out, y), moved)
    for p, q, g in zip(model.parameters(), ref.parameters(), g2, strict=True):
        assert torch.allclose(p, q - lr * g, atol=1e-6)


def test_ghost_bn_normalises_each_ghost_batch():
    bn = nn.BatchNorm1d(2)
    gbn = GhostBatchNorm(bn, ghost_batch=4)
    x = torch.randn(8, 2) * 3 + 1
    out = gbn(x)
    for chunk, o in zip(x.split(4), out.split(4), strict=True):
        ref = (chunk - chunk.mean(0)) / torch.sqrt(chunk.var(0, unbiased=False) + bn.eps)
        assert torch.allclose(o, ref, atol=1e-5)
    gbn.eval()
    assert torch.allclose(
        gbn(x),
        nn.functional.batch_norm(
            x, gbn.running_mean, gbn.running_var, gbn.weight, gbn.bias, False, 0.0, gbn.eps
        ),
    )


def test_ghost_bn_model_keeps_the_plain_weights(store):
    cnn = {"name": "cnn", "params": {"channels": [4, 8]}}
    ghost = parse_spec(
        {**DIGITS, "model": {"name": "ghost_bn", "params": {"model": cnn, "ghost_batch": 10}}}
    )
    plain = parse_spec({**DIGITS, "model": cnn})
    g, p = run_spec(ghost, store, progress=False), run_spec(plain, store, progress=False)
    assert plain_state(store, g.run_id).keys() == plain_state(store, p.run_id).keys()
    with pytest.raises(SpecError, match="no BatchNorm"):
        run_spec(
            parse_spec(
                {**DIGITS, "model": {"name": "ghost_bn", "params": {"model": DIGITS["model"]}}}
            ),
            store,
            progress=False,
        )
    with pytest.raises(SpecError, match="model.params.model.params.width"):
        parse_spec(
            {
                **DIGITS,
                "model": {
                    "name": "ghost_bn",
                    "params": {"model": {"name": "mlp", "params": {"width": -1}}},
                },
            }
        )


def test_regime_scales_lr_and_steps():
    base = {**DIGITS, "batch_size": 128, "steps": 400, "optimizer": {"lr": 0.1, "warmup_steps": 8}}
    out = apply_regime({**base, "regime": {"base_batch": 32}})
    assert out["optimizer"]["lr"] == pytest.approx(0.2) and out["steps"] == 100
    assert out["optimizer"]["warmup_steps"] == 2
    eq = apply_regime(
        {**base, "regime": {"base_batch": 32, "lr_scaling": "linear", "updates": "equal_updates"}}
    )
    assert eq["optimizer"]["lr"] == pytest.approx(0.4) and eq["steps"] == 400
    assert "regime" not in parse_spec({**base, "regime": {"base_batch": 32}}).model_dump()
    with pytest.raises(SpecError, match="regime.lr_scaling"):
        parse_spec({**base, "regime": {"base_batch": 32, "lr_scaling": "cube"}})
    with pytest.raises(SpecError, match="batch_size"):
        parse_spec({**base, "batch_size": None, "regime": {"base_batch": 32}})


def test_weight_distance_is_zero_at_init_and_survives_resume(store, tmp_path):
    from genlab.store import Store

    probes = [{"name": "weight_distance"}]
    spec = parse_spec(
        {**DIGITS, "eval": {"every": 5, "log_points": 0, "probes": probes}, "checkpoint_every": 10}
    )
    run_spec(spec, store, progress=False)
    m = store.metrics(spec.run_id)
    d = m[m["metric"] == "weight_distance"].set_index("step")["value"]
    assert d[0] == 0.0 and (d.diff().dropna() > 0).all()
    other = Store(tmp_path / "other")  # killed after the checkpoint at step 10, then resumed
    interrupted_then_resumed(spec, other, at=15)
    m2 = other.metrics(spec.run_id)
    d2 = m2[m2["metric"] == "weight_distance"].set_index("step")["value"]
    assert d2.loc[20] == pytest.approx(d.loc[20], rel=1e-6)
    assert not math.isnan(d2.loc[15])


def test_teacher_dropping_keeps_the_hardest_teacher():
    losses = torch.tensor([[0.1, 5.0, 0.2], [3.0, 0.1, 0.3], [0.2, 0.2, 9.0]])
    w = teacher_drop_weights(losses, drop=0.999999)
    assert torch.equal(w > 0, torch.eye(3, dtype=torch.bool)[[1, 0, 2]])  # argmax per column
    assert w.sum().item() == pytest.approx(1.0)
    all_kept = teacher_drop_weights(losses, drop=0.0)
    assert torch.allclose(all_kept, torch.full((3, 3), 1 / 9))


def test_unic_distils_and_drops_its_heads(store):
    teacher = run_spec(
        parse_spec({**DIGITS, "model": {"name": "cnn", "params": {"channels": [4, 8]}}}),
        store,
        progress=False,
    )
    student = parse_spec(
        {
            **DIGITS,
            "model": {"name": "mlp", "params": {"width": 16, "depth": 2}},
            "method": {"name": "unic", "params": {"teachers": [teacher.run_id]}},
        }
    )
    r = run_spec(student, store, progress=False)
    assert r.status == "done"
    state = plain_state(store, r.run_id)
    assert all(k.startswith("net.") for k in state)
    m = store.metrics(r.run_id)
    assert (m["metric"] == "distill").any()
