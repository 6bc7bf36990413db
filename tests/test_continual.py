"""Continual learning: scenarios, the metric definitions on a hand-built R, every method taking
real steps, EWC's penalty, the bounded buffer, Model Zoo's members, and `genlab run`'s matrix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from typer.testing import CliRunner

from genlab.analysis.continual import accuracy_matrix, boundaries, long_table, summary
from genlab.cli import app
from genlab.engine import run_spec
from genlab.engine.train import prepare
from genlab.methods.cl_buffer import ExperienceBuffer
from genlab.spec import parse_spec
from genlab.tasks.cl_split import ClSplitParams, _rotate, cl_split
from genlab.tasks.digits import DigitsParams, digits


def build(**kw):
    return cl_split(ClSplitParams(base_params={"train_size": 600}, **kw), 0)


def spec(method: str, steps: int = 100, **task) -> dict:
    return {
        "task": {
            "name": "cl_split",
            "params": {"experiences": 2, "base_params": {"train_size": 300}, **task},
        },
        "model": {"name": "mlp", "params": {"width": 32, "depth": 1}},
        "method": {"name": method},
        "steps": steps,
        "batch_size": 16,
        "optimizer": {"name": "adam", "lr": 1e-2},
        "eval": {"every": 1000, "log_points": 0, "probes": [{"name": "cl_accuracy"}]},
    }


# ---- scenarios ----------------------------------------------------------------------------------


def test_split_digits_is_five_experiences_of_two_classes():
    d = build()
    assert d.info.extra["classes"] == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    for k in range(5):
        cls = set(d.info.extra["classes"][k])
        assert set(d.train[f"e{k}"].y.tolist()) == cls == set(d.test[f"e{k}"].y.tolist())
        assert d.test[f"e{k}"].meta == {"experience": k, "classes": sorted(cls), "mask": False}
    assert sum(len(s) for s in d.train.values()) == 600
    shuffled = build(order_seed=3, scenario="task")
    assert shuffled.info.extra["classes"] != d.info.extra["classes"]
    assert sorted(sum(shuffled.info.extra["classes"], [])) == list(range(10))
    assert shuffled.test["e0"].meta["mask"] and shuffled.info.chance == 0.5


def test_permuted_rotated_and_few_shot_streams():
    p = build(variant="permuted", experiences=3)
    base = digits(DigitsParams(train_size=600), 0).train["main"]
    assert torch.equal(p.train["e0"].x, base.x)  # e0 is the base task, unpermuted
    x0, x1 = p.train["e0"].x.flatten(1), p.train["e1"].x.flatten(1)
    assert not torch.equal(x0, x1) and torch.equal(x0.sort(1).values, x1.sort(1).values)
    img = torch.zeros(1, 1, 8, 8)
    img[0, 0, 0, 3] = 1.0
    assert torch.allclose(_rotate(img, 90.0), torch.rot90(img, 1, (2, 3)), atol=1e-5)
    r = build(variant="rotated", experiences=3, max_angle=180)
    assert torch.allclose(r.train["e2"].x, torch.rot90(r.train["e0"].x, 2, (2, 3)), atol=1e-4)
    few = build(shots=5)
    assert all(len(s) == 10 for s in few.train.values())
    with pytest.raises(ValueError, match="experiences"):
        build(experiences=11)


# ---- metrics ------------------------------------------------------------------------------------

R = np.array([[0.9, 0.1, 0.0], [0.5, 0.8, 0.2], [0.4, 0.6, 0.7]])
B = np.array([0.1, 0.1, 0.1])


def test_metric_definitions_on_a_hand_built_matrix():
    s = summary(R, B)
    assert s["avg_accuracy"] == pytest.approx((0.4 + 0.6 + 0.7) / 3)
    assert s["forgetting"] == pytest.approx(((0.9 - 0.4) + (0.8 - 0.6)) / 2)
    assert s["bwt"] == pytest.approx(-s["forgetting"])
    assert s["fwt"] == pytest.approx(((0.1 - 0.1) + (0.2 - 0.1)) / 2)
    assert len(long_table(R)) == 9


def test_accuracy_matrix_is_read_at_the_experience_boundaries():
    assert boundaries(100, 3) == [33, 66, 100]
    rows = [
        (s, f"test/e{j}", "accuracy", v)
        for s, r in zip([33, 66, 100], R, strict=True)
        for j, v in enumerate(r)
    ]
    rows += [(0, f"test/e{j}", "accuracy", 0.1) for j in range(3)]
    rows += [(50, "test/e0", "accuracy", 0.0), (50, "test/e1", "accuracy", 0.0)]  # not a boundary
    r, b = accuracy_matrix(pd.DataFrame(rows, columns=["step", "split", "metric", "value"]))
    assert np.allclose(r, R) and np.allclose(b, B)


# ---- methods ------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["finetune", "joint", "replay", "ewc", "model_zoo", "fast_slow"])
def test_every_method_takes_real_steps_and_fills_the_matrix(method, store):
    s = parse_spec(spec(method))
    before = [p.detach().clone() for p in prepare(s).model.parameters()]
    res = run_spec(s, store, progress=False)
    assert res.status == "done"
    m = store.metrics(s.run_id)
    r, _ = accuracy_matrix(m, 100)
    assert r.shape == (2, 2) and np.isfinite(r).all()
    assert r[0, 0] > 0.8  # learned the first experience (digits 0-4)
    steps = set(m["step"])
    assert {50, 100} <= steps
    from genlab.engine.checkpoint import load

    final = load(store.run_dir(s.run_id) / "model.pt")["model"]
    assert any(not torch.equal(a, final[k]) for a, k in zip(before, final, strict=False))


def test_continual_methods_refuse_a_task_without_experiences():
    d = spec("ewc")
    d["task"] = {"name": "digits"}
    with pytest.raises(Exception, match="cl_split"):
        prepare(parse_spec(d))


def test_ewc_penalty_is_zero_in_the_first_experience_and_not_after(store):
    s = parse_spec({**spec("ewc", steps=40), "eval": {"every": 5, "log_points": 0}})
    run_spec(s, store, progress=False)
    m = store.metrics(s.run_id)
    pen = m[m["metric"] == "ewc_penalty"].set_index("step")["value"]
    assert (pen[pen.index <= 20] == 0).all()
    assert (pen[pen.index > 25] > 0).all()


def test_fast_slow_restarts_each_experience_from_the_moved_slow_weights():
    from genlab.data import TaskInfo
    from genlab.methods.cl_fast_slow import FastSlow, FastSlowParams

    info = TaskInfo("classification", 2, (2,), extra={"experiences": 2, "classes": [[0, 1]] * 2})
    method = FastSlow(FastSlowParams(slow_rate=0.25), info)
    model = torch.nn.Linear(2, 2)
    init = [p.detach().clone() for p in model.parameters()]
    method.before_experience(model, 0)  # the slow weights start at the initialisation
    method.pool.add(torch.randn(8, 2), torch.randint(2, (8,)), 0)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)  # what training on experience 0 did to the fast weights
    method.before_experience(model, 1)
    for p, p0, a in zip(model.parameters(), init, method.anchors[0], strict=True):
        assert torch.allclose(a, p0 + 1.0)  # step 1: the fast weights consolidated as EWC
        assert torch.allclose(p, p0 + 0.25)  # step 2: slow moved a quarter; fast restart there
    state = method.state_dict()
    again = FastSlow(FastSlowParams(slow_rate=0.25), info)
    again.load_state_dict(state)
    assert all(torch.equal(a, b) for a, b in zip(again.slow, method.slow, strict=True))


def test_fast_slow_at_slow_rate_one_is_ewc(store):
    runs = []
    for name, params in (("ewc", {}), ("fast_slow", {"slow_rate": 1.0})):
        s = parse_spec({**spec(name, steps=40), "method": {"name": name, "params": params}})
        runs.append(run_spec(s, store, progress=False).final)
    assert runs[0] == pytest.approx(runs[1], rel=1e-6)  # s + (f - s) rounds, nothing else


def test_replay_buffer_stays_bounded_and_balanced():
    buf = ExperienceBuffer(10)
    for k in range(3):
        buf.start(k)
        for _ in range(5):
            buf.add(torch.randn(8, 4), torch.full((8,), k), k)
            assert len(buf) <= 10
        assert len(buf.y[k]) == 10 // (k + 1)
    assert [len(y) for y in buf.y] == [3, 3, 3]
    x, y, e = buf.sample(6, [0, 1])
    assert set(e.tolist()) <= {0, 1} and torch.equal(y, e)


def test_model_zoo_grows_one_member_per_experience(store):
    s = parse_spec(spec("model_zoo"))
    run_spec(s, store, progress=False)
    from genlab.engine.checkpoint import load

    seen = load(store.run_dir(s.run_id) / "model.pt")["model"]["seen"]
    assert seen.tolist() == [[True, False], [True, True]]  # member 1 also trained on task 0


# ---- the command line ---------------------------------------------------------------------------


def test_genlab_run_prints_the_matrix_and_draws_the_heat_map(tmp_path):
    res = CliRunner().invoke(
        app,
        ["run", "cl-split-digits", "method.name=ewc", "steps=100", "--store", str(tmp_path), "-q"],
    )
    assert res.exit_code == 0, res.output
    assert "accuracy matrix" in res.output and "forgetting" in res.output
    assert list(tmp_path.glob("runs/*/accuracy_matrix.png"))
