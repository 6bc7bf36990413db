"""The Ray executor: task packing and the worker-to-driver transfer without Ray; a real local Ray on
loopback (Ray is in the dev extra; CI fails rather than skip when it is missing), killed mid-sweep
and resumed."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from genlab.engine import run_spec
from genlab.engine.checkpoint import FINAL
from genlab.store import Store
from genlab.sweep import parse_sweep, plan
from genlab.sweep.ray_exec import pack, train_pack
from genlab.sweep.transfer import export_runs, import_runs

HAS_RAY = importlib.util.find_spec("ray") is not None


def specs(methods=("erm", "groupdro"), seeds=3, steps=10):
    sweep = parse_sweep(
        {
            "base": "grokking",
            "seeds": seeds,
            "unset": ["batch_size", "stop"],
            "set": [
                "task.p=11",
                "model.name='mlp'",
                "model.width=16",
                "model.embed_dim=4",
                f"steps={steps}",
                "eval.every=5",
                "eval.log_points=0",
            ],
            "grid": {"method.name": list(methods), "optimizer.lr": [1e-3, 2e-3]},
        }
    )
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


RAY_SWEEP = """
name = "raykill"
base = "grokking"
set = ["task.p=11", "model.name='mlp'", "model.width=16", "model.embed_dim=4", "eval.every=1000",
       "eval.log_points=0"]
unset = ["batch_size", "stop"]
seeds = 2
[grid]
steps = [20, 6000]  # one fast pack, stored within a second, and one that takes seconds
"""
RAY_ENV = {
    "OMP_NUM_THREADS": "1",
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_DEFAULT_OBJECT_STORE_MEMORY_PROPORTION": "0.02",
}


def _runs(root) -> dict[str, tuple]:
    if not (root / "genlab.db").exists():
        return {}
    return {r.run_id: (r.status, r.step, r.finished) for r in Store(root).runs().itertuples()}


def _kill_session(sid: int) -> None:
    """SIGKILL what is left of the session ``sid`` (the killed driver's Ray processes)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
            if int(fields[3]) == sid:
                os.kill(int(stat.parent.name), signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            continue


@pytest.mark.slow  # two local Ray starts: ~30 s
@pytest.mark.skipif(not HAS_RAY and not os.environ.get("CI"), reason="pip install 'genlab[ray]'")
def test_local_ray_killed_mid_sweep_then_resumed(tmp_path, monkeypatch):
    """A sweep on a local Ray (2 CPUs, loopback) run by a driver that is SIGKILLed once the first
    pack is stored; running the sweep again skips what was stored and trains only the rest."""
    from genlab.sweep import load_sweep, make_executor

    f = tmp_path / "sweep.toml"
    f.write_text(RAY_SWEEP)
    root = tmp_path / "store"
    cmd = [
        sys.executable,
        "-m",
        "genlab",
        "sweep",
        str(f),
        "--executor",
        "ray",
        "--workers",
        "2",
        "--store",
        str(root),
        "-q",
    ]
    log = (tmp_path / "driver.log").open("w")
    proc = subprocess.Popen(
        cmd,
        env={**os.environ, **RAY_ENV},
        start_new_session=True,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.time() + 180
        while not any(r[0] == "done" for r in _runs(root).values()):
            assert proc.poll() is None, (tmp_path / "driver.log").read_text()[-3000:]
            assert time.time() < deadline, "no pack was stored in time"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        _kill_session(proc.pid)
        log.close()
    before = _runs(root)
    assert {r[1] for r in before.values()} == {20}, (
        f"the sweep ended before it could be killed: {before}"
    )

    for key, value in RAY_ENV.items():
        monkeypatch.setenv(key, value)
    specs = [p["spec"] for p in plan(*load_sweep(f))]
    out = make_executor("ray", workers=2)(specs, Store(root), False)
    assert sorted(o.status for o in out) == ["done", "done", "skipped", "skipped"]
    after = _runs(root)
    assert len(after) == 4 and {r[0] for r in after.values()} == {"done"}
    assert {rid: after[rid] for rid in before} == before  # the stored pack was not run again
    assert sorted(r[1] for r in after.values()) == [20, 20, 6000, 6000]
    again = make_executor("ray", workers=2)(specs, Store(root), False)
    assert {o.status for o in again} == {"skipped"}
