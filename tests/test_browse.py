"""Browsing the store: ``genlab runs --where/--sort/--desc/--columns`` and ``genlab rm``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genlab.cli import app
from genlab.spec import load_run_spec
from genlab.store import Store, _pid_start

from .conftest import TINY
from .test_user_errors import _read_only, _snapshot, _writable_again, one_line_error

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args))


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """Two tiny runs (seeds 0 and 1, lr 1e-3 and 3e-3) and a failed one with a folder."""
    store = tmp_path_factory.mktemp("browse") / "store"
    ids = {}
    for seed, lr in ((0, "1e-3"), (1, "3e-3")):
        res = invoke(
            "run",
            "grokking",
            *TINY,
            f"seed={seed}",
            f"optimizer.lr={lr}",
            "--store",
            str(store),
            "--json",
        )
        assert res.exit_code == 0, res.output
        ids[f"seed{seed}"] = json.loads(res.stdout)["run_id"]
    spec = load_run_spec("grokking", [*TINY, "seed=7"])
    st = Store(store)
    st.begin(spec.run_id, spec.canonical_json())
    st.log_metrics(spec.run_id, [(0, "train/main", "accuracy", 0.1)])
    (st.run_dir(spec.run_id) / "model.pt").parent.mkdir(parents=True)
    (st.run_dir(spec.run_id) / "model.pt").write_bytes(b"x")
    st.add_artifact(spec.run_id, "model", st.run_dir(spec.run_id) / "model.pt")
    st.finish(spec.run_id, "failed", 0, 0.0, error="boom")
    ids["failed"] = spec.run_id
    return store, ids


def runs_json(store: Path, *args: str) -> list[dict]:
    res = invoke("runs", "--store", str(store), "--json", *args)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_where_filters_by_label_field_and_config(three_runs):
    store, ids = three_runs
    assert [r["run_id"] for r in runs_json(store, "--where", "seed=1")] == [ids["seed1"]]
    assert [r["run_id"] for r in runs_json(store, "--where", "status=failed")] == [ids["failed"]]
    both = runs_json(store, "-w", "optimizer.lr=0.001,0.003", "-w", "task=modular_arithmetic")
    assert {r["run_id"] for r in both} == {ids["seed0"], ids["seed1"]}
    assert [r["run_id"] for r in runs_json(store, "--where", "task.p=11", "--where", "seed=0")] == [
        ids["seed0"]
    ]
    assert runs_json(store, "--where", "method=irm") == []


def test_sort_by_a_metric_and_columns(three_runs):
    store, ids = three_runs
    key = "train/main:loss"
    rows = runs_json(store, "--sort", key, "--desc", "--columns", f"run_id,optimizer.lr,{key}")
    assert set(rows[0]) == {"run_id", "optimizer.lr", key}
    values = [r[key] for r in rows]
    assert values[-1] is None  # the failed run has no final metrics: last, either way
    assert values[:2] == sorted(values[:2], reverse=True)
    up = runs_json(store, "--sort", key, "--columns", f"run_id,{key}")
    assert [r["run_id"] for r in up[:2]] == [r["run_id"] for r in rows[:2]][::-1]
    table = invoke("runs", "--store", str(store), "--columns", "run_id,status,optimizer.lr")
    assert table.exit_code == 0 and "0.003" in table.stdout and "failed" in table.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--columns", "run_id,acuracy"], "--columns: unknown key 'acuracy'"),
        (["--sort", "accuracy"], "--sort: unknown key 'accuracy' (did you mean 'test/"),
        (["--where", "colour=red"], "--where: unknown key 'colour'"),
        (["--where", "seed"], "--where takes KEY=VALUE"),
    ],
)
def test_unknown_keys_are_one_line_errors_naming_what_is_allowed(three_runs, args, message):
    store, _ = three_runs
    line = one_line_error(invoke("runs", "--store", str(store), *args), 2)
    assert message in line
    if "unknown key" in message:
        assert "allowed: run_id, status, step" in line and "optimizer.lr" in line


def _copy(store: Path, tmp_path: Path) -> Path:
    import shutil

    Store(store).close()
    dest = tmp_path / "copy"
    shutil.copytree(store, dest)
    return dest


def test_rm_failed_lists_without_yes_and_deletes_with_it(three_runs, tmp_path):
    store = _copy(three_runs[0], tmp_path)
    ids = three_runs[1]
    before = _snapshot(store)
    dry = invoke("rm", "--failed", "--store", str(store))
    assert dry.exit_code == 0 and ids["failed"] in dry.stdout and "--yes" in dry.stderr
    assert _snapshot(store) == before and len(runs_json(store)) == 3
    res = invoke("rm", "--failed", "--yes", "--store", str(store))
    assert res.exit_code == 0, res.output
    st = Store(store)
    assert {r["run_id"] for r in runs_json(store)} == {ids["seed0"], ids["seed1"]}
    assert st.metrics(ids["failed"]).empty and st.artifacts(ids["failed"]) == {}
    assert not st.run_dir(ids["failed"]).exists() and not list((store / "runs").glob(".del*"))
    assert not st.metrics(ids["seed0"]).empty  # the others keep theirs


def test_rm_by_prefix_and_unknown_run(three_runs, tmp_path):
    store = _copy(three_runs[0], tmp_path)
    ids = three_runs[1]
    assert "no run matching 'zzz'" in one_line_error(
        invoke("rm", "zzz", "--yes", "--store", str(store)), 2
    )
    assert "give --failed" in one_line_error(invoke("rm", "--store", str(store)), 2)
    res = invoke("rm", ids["seed0"][:10], "--yes", "--store", str(store))
    assert res.exit_code == 0, res.output
    assert {r["run_id"] for r in runs_json(store)} == {ids["seed1"], ids["failed"]}


def test_rm_is_all_or_nothing(three_runs, tmp_path, monkeypatch):
    store = _copy(three_runs[0], tmp_path)
    ids = three_runs[1]
    before = sorted(p.relative_to(store) for p in store.rglob("*"))
    real = Path.rename
    calls = []

    def flaky(self, target):
        calls.append(self)
        if len(calls) == 2:  # the second folder cannot be moved: the first is put back
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, target)

    monkeypatch.setattr(Path, "rename", flaky)
    res = invoke("rm", ids["seed0"], ids["seed1"], "--yes", "--store", str(store))
    monkeypatch.undo()
    line = one_line_error(res, 2)
    assert "nothing deleted" in line and "Permission denied" in line
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before  # folders back
    assert len(runs_json(store)) == 3


def test_rm_refuses_a_read_only_store_and_a_live_run(three_runs, tmp_path):
    store = _copy(three_runs[0], tmp_path)
    ids = three_runs[1]
    before = _snapshot(store)
    _read_only(store)
    try:
        line = one_line_error(invoke("rm", "--failed", "--yes", "--store", str(store)), 2)
    finally:
        _writable_again(store)
    assert "read-only" in line and _snapshot(store) == before
    st = Store(store)
    with st._write() as c:  # the parent process (alive) holds the failed run's lease
        c.execute(
            "INSERT INTO leases VALUES (?, ?, ?, ?, ?, ?)",
            (ids["failed"], os.getppid(), os.uname().nodename, _pid_start(os.getppid()), 0.0, 0.0),
        )
    line = one_line_error(invoke("rm", ids["failed"], "--yes", "--store", str(store)), 2)
    assert f"run {ids['failed']} is being trained by pid {os.getppid()}" in line
    assert len(runs_json(store)) == 3
