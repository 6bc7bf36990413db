"""Weight-space tools: ops by hand, lineage and the shared-initialisation check, from_run heads,
interpolation paths against the store, ratatouille plans, and ``genlab soup``."""

from __future__ import annotations

import json

import pytest
import torch
from torch import nn
from typer.testing import CliRunner

from genlab.cli import app
from genlab.engine import run_spec
from genlab.errors import SpecError
from genlab.spec import parse_spec
from genlab.store_context import using_store
from genlab.weights.load import check_shared_init, head_of, load_model, plain_state
from genlab.weights.ops import average, greedy_soup, interpolate, recompute_bn, uniform_soup
from genlab.weights.path import (
    combination_scores,
    false_false_true,
    interpolation_path,
    parse_lambdas,
)
from genlab.weights.ratatouille import ratatouille_plan

BASE = {
    "task": {"name": "digits", "params": {"train_size": 200}},
    "model": {"name": "mlp", "params": {"width": 16, "depth": 1}},
    "steps": 30,
    "batch_size": 50,
    "eval": {"every": 30, "log_points": 0},
}


def spec(**over):
    return parse_spec({**BASE, **over})


def finetune(parent: str, **model):
    return spec(
        model={"name": "from_run", "params": {"run": parent, **model}}, optimizer={"lr": 3e-3}
    )


@pytest.fixture
def trio(store):
    """A, B fine-tuned from A, C independent (seed 1)."""
    a = run_spec(spec(), store, progress=False)
    b = run_spec(finetune(a.run_id), store, progress=False)
    c = run_spec(spec(seed=1), store, progress=False)
    return a.run_id, b.run_id, c.run_id


def test_interpolate_average_and_soups_by_hand():
    a = {"w": torch.tensor([0.0, 2.0]), "n": torch.tensor(3)}
    b = {"w": torch.tensor([4.0, 6.0]), "n": torch.tensor(5)}
    assert torch.equal(interpolate(a, b, 0.25)["w"], torch.tensor([1.0, 3.0]))
    assert torch.equal(interpolate(a, b, 0.0)["w"], a["w"])
    assert interpolate(a, b, 0.5)["n"].item() == 3  # integer buffers: the first state's
    assert torch.allclose(average([a, b], [3, 1])["w"], torch.tensor([1.0, 3.0]))
    assert torch.allclose(uniform_soup([a, b])["w"], torch.tensor([2.0, 4.0]))
    with pytest.raises(ValueError, match="non-negative"):
        average([a, b], [1, -1])


def test_greedy_soup_keeps_only_ingredients_that_do_not_hurt():
    states = [{"w": torch.tensor([v])} for v in (0.8, 1.3, 3.0, 1.15)]

    def score(s):  # best at w = 1; order by score: 1.15, 0.8, 1.3, 3.0
        return -abs(s["w"].item() - 1.0)

    soup, kept = greedy_soup(states, score)
    assert kept == [3, 0]  # 0.8 brings the mean to 0.975; 1.3 and 3.0 would move it away
    assert soup["w"].item() == pytest.approx(0.975)


def test_recompute_bn_matches_the_data_statistics():
    bn = nn.BatchNorm1d(3)
    x = torch.randn(500, 3) * 2 + 5
    assert recompute_bn(nn.Sequential(bn), x, batch_size=100)
    assert torch.allclose(bn.running_mean, x.mean(0), atol=1e-5)
    assert not recompute_bn(nn.Linear(2, 2), x)


def test_shared_initialisation_check(store, trio):
    a, b, c = trio
    assert "ancestor " + a in check_shared_init(store, [a, b])
    with pytest.raises(SpecError, match="do not share an initialisation"):
        check_shared_init(store, [a, c])
    same_seed = run_spec(spec(optimizer={"lr": 2e-3}), store, progress=False).run_id
    assert check_shared_init(store, [a, same_seed]) == "same architecture and seed"
    with pytest.raises(SpecError, match="no run"):
        check_shared_init(store, [a, "0" * 16])


def test_from_run_starts_from_the_parent_and_heads(store, trio):
    a, _, _ = trio
    with using_store(store):
        parent = plain_state(store, a)
        kept = load_model(store, a)
        from genlab.derived.from_run import FromRunParams, from_run
        from genlab.tasks import TASKS

        info = TASKS.get("digits").obj(TASKS.get("digits").params(train_size=200), 0).info
        m1 = from_run(FromRunParams(run=a, head="new", head_seed=3), info)
        m2 = from_run(FromRunParams(run=a, head="new", head_seed=3), info)
        m3 = from_run(FromRunParams(run=a, head="new", head_seed=4), info)
    name, head = head_of(m1)
    for k, v in m1.state_dict().items():
        if k.startswith(name + "."):
            assert torch.equal(v, m2.state_dict()[k])  # same head seed, same fresh head
            assert not torch.equal(v, m3.state_dict()[k])
            assert not torch.equal(v, parent[k])
        else:
            assert torch.equal(v, parent[k])
    assert head_of(kept)[0] == name


def test_linear_probe_trains_only_the_head(store, trio):
    a, _, _ = trio
    lp = run_spec(finetune(a, head="new", freeze="features"), store, progress=False)
    before, after = plain_state(store, a), plain_state(store, lp.run_id)
    name = head_of(load_model(store, a))[0]
    for k in before:
        same = torch.equal(before[k], after[k])
        assert same != k.startswith(name + "."), k


def test_from_run_errors(store, trio):
    a, _, _ = trio
    with pytest.raises(SpecError, match="head_run is required"):
        spec(model={"name": "from_run", "params": {"run": a, "head": "run"}})
    with pytest.raises(SpecError, match="run"):
        spec(model={"name": "from_run", "params": {"run": "xyz"}})
    with pytest.raises(SpecError, match="no run"):
        run_spec(finetune("f" * 16), store, progress=False)


def test_interpolation_path_ends_are_the_runs(store, trio):
    a, b, c = trio
    res = interpolation_path(store, a, b, [0.0, 0.5, 1.0])
    final_b = store.run(b)["summary"]["final"]
    end = res.table[(res.table["lam"] == 1.0) & (res.table["split"] == "test/heldout")]
    assert end["accuracy"].item() == pytest.approx(final_b["test/heldout:accuracy"], abs=1e-6)
    assert res.correct["test/heldout"].shape[0] == 3
    with pytest.raises(SpecError, match="share"):
        interpolation_path(store, a, c, [0.0, 1.0])
    loose = interpolation_path(store, a, c, [0.0, 1.0], allow_unrelated=True)
    assert "none" in loose.shared
    one = combination_scores(store, [b])
    assert one["test/heldout"] == pytest.approx(final_b["test/heldout:accuracy"], abs=1e-6)


def test_false_false_true_and_lambda_parsing():
    ok = torch.tensor([[0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 1]], dtype=torch.bool)
    assert false_false_true(ok, 1) == pytest.approx(0.25)  # example 0: wrong, right, wrong
    assert parse_lambdas("0:1:5") == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert parse_lambdas("0,0.3") == [0.0, 0.3]
    with pytest.raises(SpecError, match="start:stop:count"):
        parse_lambdas("0:1")


def test_ratatouille_plan_links_its_stages():
    ev = {"every": 10, "log_points": 0}
    tgt = {"name": "digits", "params": {"train_size": 100}}
    plan = ratatouille_plan(
        pretrain={**BASE},
        aux_tasks=[
            {"name": "digits_views", "params": {"label": "parity"}},
            {"name": "digits_views", "params": {"label": "large"}},
        ],
        aux={"steps": 5, "eval": ev},
        target={"task": tgt, "steps": 5, "eval": ev},
        hparams=[{"seed": 0}, {"seed": 1}],
        probe={"task": tgt, "steps": 5, "eval": ev},
    )
    base, (lp, *lp_aux), aux, last = (
        plan.stages[0][0],
        plan.stages[1],
        plan.stages[2],
        plan.stages[3],
    )
    assert [s.model.params["run"] for s in aux] == [base.run_id] * 2
    assert [s.model.params["head_run"] for s in aux] == [s.run_id for s in lp_aux]
    rat = [s for s in last if s.run_id in plan.groups["ratatouille"]]
    assert [s.model.params["run"] for s in rat] == [s.run_id for s in aux]
    assert {s.model.params["head_run"] for s in last} == {lp.run_id}
    assert len(plan.groups["soup"]) == 2


def test_soup_command(store, trio, tmp_path):
    a, b, c = trio
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "soup",
            a[:8],
            b[:8],
            "--lambdas",
            "0:1:3",
            "--store",
            str(store.root),
            "--json",
            "-o",
            str(tmp_path / "p.png"),
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert len({r["lam"] for r in doc["rows"]}) == 3 and (tmp_path / "p.png").is_file()
    bad = runner.invoke(app, ["soup", a, c, "--store", str(store.root)])
    assert bad.exit_code == 2 and "share" in bad.output
    bad = runner.invoke(app, ["soup", a, b, "--lambdas", "x", "--store", str(store.root)])
    assert bad.exit_code == 2
