"""One process per run id: two ``run_spec`` calls at once train it once, a dead holder's run reads
``interrupted`` and is taken over, a live one makes a sweep report ``busy`` (issues 19, 20)."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import time

import pandas as pd
import pytest
from typer.testing import CliRunner

from genlab.cli import app
from genlab.engine import run_spec
from genlab.spec import load_run_spec
from genlab.store import HOST, LEASE_TIMEOUT, RunBusy, Store
from genlab.sweep.base import pending
from genlab.sweep.serial import run_one, serial
from tests.conftest import TINY

FORK = mp.get_context("fork")
LONGER = [*TINY, "steps=200"]  # long enough to be caught in the middle


def _train(root: str, args: list[str], wait: bool, go, q) -> None:
    """A second process: wait for ``go``, call run_spec, report what happened and when."""
    spec = load_run_spec("grokking", args)
    go.wait(60)
    t0 = time.time()
    try:
        r = run_spec(spec, Store(root), progress=False, wait=wait)
        q.put(("trained" if not r.skipped else "skipped", r.final, t0, time.time()))
    except RunBusy as exc:
        q.put(("busy", str(exc), t0, time.time()))


def _reference(tmp_path, args):
    spec = load_run_spec("grokking", args)
    ref = Store(tmp_path / "ref")
    return spec, ref, run_spec(spec, ref, progress=False)


def test_a_second_run_spec_meets_the_live_one_busy(tmp_path):
    """Deterministic overlap: the second call happens while the first is between evaluations."""
    spec, ref, want = _reference(tmp_path, LONGER)
    root = tmp_path / "store"
    go, q = FORK.Event(), FORK.Queue()
    other = FORK.Process(target=_train, args=(str(root), LONGER, False, go, q))
    other.start()
    answered = []

    def on_eval(step, _metrics):  # hold the first run mid-training until the second has tried
        if not answered:
            go.set()
            answered.append(q.get(timeout=120))

    got = run_spec(spec, Store(root), progress=False, on_eval=on_eval)
    other.join(60)
    kind, msg, t_try, _ = answered[0]
    assert kind == "busy"
    assert msg == f"run {spec.run_id} is being trained by pid {os.getpid()} on {HOST}"
    assert not got.skipped and got.final == want.final
    pd.testing.assert_frame_equal(Store(root).metrics(spec.run_id), ref.metrics(spec.run_id))


def test_two_run_specs_released_together_train_once(tmp_path):
    """A real race for the lease (a barrier releases both); with ``wait`` the loser waits and then
    returns the winner's numbers. Exactly one trains; the metrics equal a single run's."""
    spec, ref, want = _reference(tmp_path, LONGER)
    root = str(tmp_path / "store")
    go, q = FORK.Event(), FORK.Queue()
    procs = [FORK.Process(target=_train, args=(root, LONGER, True, go, q)) for _ in range(2)]
    for p in procs:
        p.start()
    time.sleep(0.5)
    go.set()
    results = [q.get(timeout=180) for _ in procs]
    for p in procs:
        p.join(60)
    kinds = sorted(r[0] for r in results)
    assert kinds == ["skipped", "trained"], results
    assert all(r[1] == want.final for r in results)
    trained = next(r for r in results if r[0] == "trained")
    waited = next(r for r in results if r[0] == "skipped")
    assert waited[2] < trained[3]  # the loser asked before the winner had finished: they overlapped
    pd.testing.assert_frame_equal(Store(root).metrics(spec.run_id), ref.metrics(spec.run_id))


def _hold(root: str, run_id: str, spec_json: str | None, ready) -> None:
    store = Store(root)
    if spec_json:
        store.begin(run_id, spec_json)
    else:
        assert store.acquire(run_id) is None
    ready.set()
    time.sleep(120)  # until the fixture kills it (a killed waiter would wedge a shared Event)


@pytest.fixture
def held(tmp_path):
    """A live process holding a spec's lease (``begin``: its run row too): ``held(spec)``."""
    procs = []

    def start(spec, begin: bool = True):
        ready = FORK.Event()
        args = (str(tmp_path / "store"), spec.run_id, spec.canonical_json() if begin else None)
        p = FORK.Process(target=_hold, args=(*args, ready))
        p.start()
        assert ready.wait(60)
        procs.append(p)
        return p

    yield start
    for p in procs:
        p.kill()
        p.join(30)


def test_a_dead_holder_reads_interrupted_and_is_taken_over(tmp_path, held, tiny_spec):
    root = tmp_path / "store"
    proc = held(tiny_spec)
    store = Store(root)
    assert store.status(tiny_spec.run_id) == "running"
    assert store.holder(tiny_spec.run_id).pid == proc.pid and store.is_live(tiny_spec.run_id)
    os.kill(proc.pid, signal.SIGKILL)
    time.sleep(0.5)  # not reaped yet: a zombie counts as dead
    assert store.status(tiny_spec.run_id) == "interrupted"
    res = CliRunner().invoke(app, ["runs", "--store", str(root), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)[0]["status"] == "interrupted"
    assert run_spec(tiny_spec, store, progress=False).status == "done"  # taken over


def test_leases_of_other_hosts_live_by_their_heartbeat(store, tiny_spec):
    rid = tiny_spec.run_id
    store.acquire("seed-the-db")
    now = time.time()
    with store._write() as c:
        c.execute("INSERT INTO leases VALUES (?, 4242, 'elsewhere', NULL, ?, ?)", (rid, now, now))
    with pytest.raises(RunBusy, match=f"run {rid} is being trained by pid 4242 on elsewhere"):
        run_spec(tiny_spec, store, progress=False)
    assert store.status(rid) is None  # nothing written
    with store._write() as c:
        c.execute("UPDATE leases SET heartbeat=?", (now - LEASE_TIMEOUT - 1,))
    assert store.holder(rid) is None
    assert run_spec(tiny_spec, store, progress=False).status == "done"


def test_a_reused_pid_is_not_the_holder(store, tiny_spec):
    """Same host, the pid alive but started at another time: another process, so dead."""
    store.acquire("seed-the-db")
    with store._write() as c:
        c.execute(
            "INSERT INTO leases VALUES (?, ?, ?, '1', 0, 0)", (tiny_spec.run_id, os.getppid(), HOST)
        )
    assert store.holder(tiny_spec.run_id) is None


def test_sweep_reports_busy_for_a_run_a_live_process_holds(tmp_path, held):
    specs = [load_run_spec("grokking", [*TINY, f"seed={s}"]) for s in (0, 1)]
    root = tmp_path / "store"
    pid = held(specs[0]).pid
    store = Store(root)
    todo, outs = pending(specs, store)
    assert [s.run_id for s in todo] == [specs[1].run_id]
    busy = f"run {specs[0].run_id} is being trained by pid {pid} on {HOST}"
    assert [(o.status, o.error) for o in outs] == [("busy", busy)]
    got = {o.run_id: o.status for o in serial(specs, store, progress=False)}
    assert got == {specs[0].run_id: "busy", specs[1].run_id: "done"}
    assert store.status(specs[0].run_id) == "running"  # untouched: its holder lives


def test_run_one_reports_busy_when_taken_after_pending(tmp_path, held, tiny_spec):
    """The race ``pending`` cannot see: the lease is taken before training starts."""
    pid = held(tiny_spec, begin=False).pid
    o = run_one(tiny_spec, Store(tmp_path / "store"), progress=False)
    assert (o.status, o.error) == (
        "busy",
        f"run {tiny_spec.run_id} is being trained by pid {pid} on {HOST}",
    )


def test_cli_run_busy_exits_naming_the_holder(tmp_path, held, tiny_spec):
    root = tmp_path / "store"
    pid = held(tiny_spec).pid
    args = ["run", "grokking", *TINY, "--store", str(root), "-q", "--no-plot"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 1
    assert f"run {tiny_spec.run_id} is being trained by pid {pid} on {HOST}" in res.output


def test_vmap_group_leaves_a_run_taken_after_pending_to_its_holder(tmp_path, held, monkeypatch):
    """vmap begins a whole stacked part at once: a replica another live process took after
    ``pending`` looked is reported busy, and the others still train, stacked."""
    from genlab.sweep import vmap
    from genlab.sweep.vmap import train_group

    monkeypatch.setattr(vmap, "SPEED_CHECK", False)  # stack whatever the load

    specs = [load_run_spec("grokking", [*TINY, f"seed={s}"]) for s in range(3)]
    pid = held(specs[0], begin=False).pid
    store = Store(tmp_path / "store")
    got = {o.run_id: (o.status, o.error) for o in train_group(specs, store, progress=False)}
    assert got[specs[0].run_id] == (
        "busy",
        f"run {specs[0].run_id} is being trained by pid {pid} on {HOST}",
    )
    assert [got[s.run_id][0] for s in specs[1:]] == ["done", "done"]
    assert store.status(specs[0].run_id) is None  # nothing written for the run it does not hold
