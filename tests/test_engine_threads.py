"""The thread policy: small models get one thread, never more than the free cores, an explicit
count wins, bad counts are bad input, and the count is recorded in the run, not in its id."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
from typer.testing import CliRunner

from genlab.cli import app
from genlab.engine import run_spec, threads
from genlab.errors import SpecError
from genlab.spec import load_run_spec
from tests.conftest import TINY


@pytest.fixture
def machine(monkeypatch):
    """A pretend machine: ``machine(cores, busy)``; torch allowed up to 64 threads."""

    def set_(cores: int, busy: int) -> None:
        monkeypatch.setattr(threads, "cores", lambda: cores)
        monkeypatch.setattr(threads, "busy_elsewhere", lambda: busy)

    monkeypatch.delenv(threads.ENV, raising=False)
    before = torch.get_num_threads()
    torch.set_num_threads(64)
    yield set_
    torch.set_num_threads(before)


def test_small_models_get_one_thread(machine):
    machine(16, 0)
    assert threads.choose(10_000) == 1
    assert threads.choose(threads.PARAMS_PER_THREAD - 1) == 1


def test_large_models_get_at_most_the_free_cores(machine):
    machine(16, 0)
    assert threads.choose(4 * threads.PARAMS_PER_THREAD) == 4
    assert threads.choose(100 * threads.PARAMS_PER_THREAD) == 16
    machine(16, 13)
    assert threads.choose(100 * threads.PARAMS_PER_THREAD) == 3
    machine(2, 9)  # overloaded: still one
    assert threads.choose(100 * threads.PARAMS_PER_THREAD) == 1


def test_torch_thread_count_caps_the_choice(machine):
    machine(16, 0)
    torch.set_num_threads(2)  # OMP_NUM_THREADS, a caller, a pool worker's share
    assert threads.choose(100 * threads.PARAMS_PER_THREAD) == 2


def test_an_explicit_count_wins(machine, monkeypatch):
    machine(2, 9)
    assert threads.choose(10, threads=3) == 3
    monkeypatch.setenv(threads.ENV, "5")
    assert threads.choose(10) == 5
    assert threads.choose(10, threads=2) == 2


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_bad_genlab_threads_is_bad_input(machine, monkeypatch, value):
    monkeypatch.setenv(threads.ENV, value)
    with pytest.raises(SpecError, match="GENLAB_THREADS"):
        threads.choose(10)


def test_cli_threads_0_exits_2_and_writes_nothing(tmp_path):
    root = tmp_path / "store"
    res = CliRunner().invoke(
        app, ["run", "grokking", *TINY, "--store", str(root), "--threads", "0"]
    )
    assert res.exit_code == 2 and "threads must be >= 1" in res.output
    assert not root.exists()


def test_count_is_recorded_in_the_summary_not_the_id(store):
    tiny_spec = load_run_spec("grokking", [*TINY, "steps=5"])  # 2 threads are slow under load
    before = torch.get_num_threads()
    r = run_spec(tiny_spec, store, progress=False, threads=2)
    assert r.threads == 2 and store.run(r.run_id)["summary"]["threads"] == 2
    assert torch.get_num_threads() == before  # restored after the run
    again = run_spec(tiny_spec, store, progress=False, threads=1)  # same id: already done
    assert again.skipped and again.run_id == r.run_id


def test_genlab_sets_passive_openmp_waiting_before_torch_loads():
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    code = "import genlab, os, torch; print(os.environ['OMP_WAIT_POLICY'])"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "PASSIVE", out.stderr
