"""The Ray executor: task packing and the worker-to-driver transfer without Ray; a local Ray on
loopback when Ray is installed (``pip install 'genlab[ray]'``)."""

from __future__ import annotations

import importlib.util

import pytest

from genlab.engine import run_spec
from genlab.engine.checkpoint import FINAL
from genlab.store import Store
from genlab.sweep import parse_sweep, plan
from genlab.sweep.ray_exec import pack, train_pack
from genlab.sweep.transfer import export_runs, import_runs

HAS_RAY = importlib.util.find_spec("ray") is not None


def specs(methods=("erm", "groupdro"), seeds=3, steps=10):
    sweep = parse_sweep({
        "base": "grokking", "seeds": seeds, "unset": ["batch_size", "stop"],
        "set": ["task.p=11", "model.name='mlp'", "model.width=16", "model.embed_dim=4",
                f"steps={steps}", "eval.every=5", "eval.log_points=0"],
        "grid": {"method.name": list(methods), "optimizer.lr": [1e-3, 2e-3]},
    })  # fmt: skip
    return [p["spec"] for p in plan(sweep)]


def test_pack_keeps_stackable_specs_together():
    todo = specs()  # 2 methods x 2 lrs x 3 seeds
    packs = pack(todo, pack_size=4)
    assert sorted(s.run_id for p in packs for s in p) == sorted(s.run_id for s in todo)
    assert [len(p) for p in packs] == [4, 2, 4, 2]
    for p in packs:
        assert len({s.method.name for s in p}) == 1  # one method per task: stackable
    assert len(pack(todo, pack_size=16)) == 2
    with pytest.raises(Exception, match="pack_size"):
        pack(todo, 0)


def test_worker_results_reach_the_driver_store_unchanged(tmp_path):
    todo = specs(methods=("erm",), seeds=2)
    payload = train_pack([s.canonical_json() for s in todo])  # what a Ray task returns
    assert len(payload) == 4 and {p["status"] for p in payload} == {"done"}
    driver = Store(tmp_path / "driver")
    outcomes = import_runs(driver, payload)
    assert [o.status for o in outcomes] == ["done"] * 4
    ref = Store(tmp_path / "ref")
    for s in todo:
        run_spec(s, ref, progress=False)
    ids = [s.run_id for s in todo]
    a, b = driver.metrics(ids), ref.metrics(ids)
    assert a[["run_id", "step", "split", "metric"]].equals(b[["run_id", "step", "split", "metric"]])
    assert ((a["value"] - b["value"]).abs() <= 1e-5 + 1e-4 * b["value"].abs()).all()
    assert (driver.run_dir(ids[0]) / FINAL).is_file()
    assert [o.status for o in import_runs(driver, payload)] == ["skipped"] * 4
    assert export_runs(driver, ids)[0]["status"] == "done"


@pytest.mark.slow  # starting Ray takes ~15 s
@pytest.mark.skipif(not HAS_RAY, reason="ray not installed (pip install 'genlab[ray]')")
def test_local_ray_on_loopback(tmp_path):
    from genlab.sweep import make_executor

    todo = specs(methods=("erm",), seeds=2, steps=6)
    store = Store(tmp_path / "store")
    out = make_executor("ray", workers=1)(todo, store, False)
    assert sorted(o.run_id for o in out) == sorted(s.run_id for s in todo)
    assert {o.status for o in out} == {"done"}
    assert set(store.runs()["status"]) == {"done"}
    again = make_executor("ray", workers=1)(todo, store, False)
    assert {o.status for o in again} == {"skipped"}
