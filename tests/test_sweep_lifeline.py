"""Workers die with their parent: a sweep killed with SIGKILL leaves no pool or Ray worker behind."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from genlab.sweep.lifeline import die_with_parent
from tests.conftest import benchmark

chaos = benchmark("chaos")

SWEEP = """
name = "orphans"
base = "grokking"
set = ["task.p=23", "model.name='mlp'", "model.width=64", "steps=100000", "eval.every=1000",
       "eval.log_points=0", "checkpoint_every=1000"]
unset = ["batch_size", "stop"]
seeds = 4
"""


def _kill_sweep_parent(tmp_path, executor: str, find_workers, timeout: float) -> set[int]:
    """Start a sweep, wait for ``find_workers(pid)`` to see its workers training, SIGKILL the
    sweep process alone (not its group); returns the workers (they are killed at the end)."""
    f = tmp_path / "sweep.toml"
    f.write_text(SWEEP)
    cmd = [
        sys.executable,
        "-m",
        "genlab",
        "sweep",
        str(f),
        "--store",
        str(tmp_path / "store"),
        "-q",
        "-e",
        executor,
        "-w",
        "2",
    ]
    proc = subprocess.Popen(
        cmd,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    workers: set[int] = set()
    try:
        deadline = time.time() + timeout
        while not workers and time.time() < deadline:
            assert proc.poll() is None, "the sweep ended before it could be killed"
            workers = find_workers(proc.pid)
            time.sleep(0.2)
        assert workers, "no workers started in time"
        time.sleep(1.0)  # the workers are training
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        return workers
    finally:
        _CLEANUP.append(workers | {proc.pid})


_CLEANUP: list[set[int]] = []


@pytest.fixture(autouse=True)
def _kill_leftovers():
    yield
    for pids in _CLEANUP:
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
    _CLEANUP.clear()


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_pool_workers_die_with_a_killed_sweep(tmp_path):
    def pool_workers(pid: int) -> set[int]:
        kids = chaos.children(pid)
        return kids if len(kids) >= 2 else set()

    workers = _kill_sweep_parent(tmp_path, "pool", pool_workers, 120)
    assert len(workers) == 2
    assert chaos.outlived(workers, 5) == set()


def _descendants(pid: int) -> set[int]:
    seen, todo = set(), [pid]
    while todo:
        for c in chaos.children(todo.pop()):
            if c not in seen:
                seen.add(c)
                todo.append(c)
    return seen


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_local_ray_workers_die_with_a_killed_sweep(tmp_path):
    """The task workers go within seconds; Ray's own agents (DashboardAgent, RuntimeEnvAgent) take
    about a minute: before exiting they try to report to the dead GCS until its timeout."""
    pytest.importorskip("ray")

    def ray_processes(driver: int) -> set[int]:
        ps = _descendants(driver)
        return ps if any("ray::train_pack" in _cmdline(p) for p in ps) else set()

    everything = _kill_sweep_parent(tmp_path, "ray", ray_processes, 240)
    agents = {p for p in everything if "Agent" in _cmdline(p)}
    assert chaos.outlived(everything - agents, 10) == set()
    assert chaos.outlived(agents, 120) == set()


def _middle(use_prctl: bool, q) -> None:
    """Start a grandchild that dies with this process, report its pid, then exit."""
    ctx = mp.get_context("fork")
    ready = ctx.Event()
    g = ctx.Process(target=_grandchild, args=(use_prctl, ready), daemon=False)
    g.start()
    ready.wait(30)
    q.put(g.pid)
    q.close()
    q.join_thread()  # flushed before the abrupt exit
    os._exit(0)


def _grandchild(use_prctl: bool, ready) -> None:
    how = die_with_parent(use_prctl=use_prctl)
    assert how == ("prctl" if use_prctl else "poll")
    ready.set()
    time.sleep(60)


@pytest.mark.parametrize("use_prctl", [True, False], ids=["prctl", "poll"])
def test_die_with_parent(use_prctl):
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    m = ctx.Process(target=_middle, args=(use_prctl, q))
    m.start()
    grandchild = q.get(timeout=60)
    m.join(30)
    assert chaos.outlived({grandchild}, 5) == set()
