"""Every error path a user can reach ends in one line naming what and where, with exit code 2 for
bad input or 1 for a failed run (recorded ``failed`` where it had started), and no traceback.

Tests run as root in CI, which ignores permission bits: an unwritable output is a path under a
regular file, and a read-only store is one whose folder and database are marked read-only
(genlab honours the bits, as ``Store`` does for writes, even for root)."""

from __future__ import annotations

import json
import os
import stat
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genlab.cli import app

from .conftest import TINY

runner = CliRunner()


pytestmark = pytest.mark.usefixtures("unload_plugins")


def invoke(*args: str):
    return runner.invoke(app, list(args))


def one_line_error(res, code: int) -> str:
    """The result exited with ``code`` through genlab's error path: one ``error:`` line, the last
    one on stderr, and no traceback (not even one the runner caught)."""
    assert res.exit_code == code, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    lines = res.stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1 and lines[-1] == errors[0], res.stderr
    return errors[0]


@pytest.fixture
def done_store(tmp_path) -> tuple[Path, str]:
    """A store holding one finished tiny run (with its curves drawn)."""
    store = tmp_path / "store"
    res = invoke("run", "grokking", *TINY, "--store", str(store), "--json")
    assert res.exit_code == 0, res.output
    return store, json.loads(res.stdout)["run_id"]


def _snapshot(root: Path) -> dict[str, float]:
    """Every file under ``root`` with its time of change (SQLite's ``-shm`` index, which any
    reader touches, left out)."""
    return {
        str(p.relative_to(root)): p.stat().st_mtime
        for p in root.rglob("*")
        if not p.name.endswith("-shm")
    }


def _read_only(root: Path) -> None:
    for p in [root, *root.rglob("*")]:
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _writable_again(root: Path) -> None:
    for p in [root, *root.rglob("*")]:
        p.chmod(p.stat().st_mode | stat.S_IWUSR)


def test_site_into_a_path_under_a_file_exits_2(tmp_path):
    (tmp_path / "afile").write_text("x")
    line = one_line_error(invoke("site", str(tmp_path / "afile" / "site")), 2)
    assert f"{tmp_path / 'afile'} is a file, not a folder" in line and "site" in line


def test_report_out_under_a_file_exits_2(done_store, tmp_path):
    store, rid = done_store
    (tmp_path / "afile").write_text("x")
    res = invoke("report", rid, "-o", str(tmp_path / "afile" / "r.md"), "--store", str(store))
    line = one_line_error(res, 2)
    assert "cannot write the report" in line and str(tmp_path / "afile") in line


def test_report_on_a_read_only_store_writes_nothing_there(done_store):
    store, rid = done_store
    before = _snapshot(store)
    _read_only(store)
    try:
        res = invoke("report", rid, "--store", str(store))
    finally:
        _writable_again(store)
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output and "read-only" in res.stderr
    assert res.stdout.startswith("# runs ") and "_figures/" in res.stdout
    assert _snapshot(store) == before  # no reports/ folder, no figure in the store
    figure = res.stdout.split("](")[1].split(")")[0]
    assert Path(figure).is_file() and not Path(figure).is_relative_to(store)


def test_rerun_of_a_finished_run_on_a_read_only_store(done_store):
    store, _ = done_store
    before = _snapshot(store)
    _read_only(store)
    try:
        res = invoke("run", "grokking", *TINY, "--store", str(store))
    finally:
        _writable_again(store)
    assert res.exit_code == 0, res.output
    assert "already done" in res.output and "Traceback" not in res.output
    assert _snapshot(store) == before  # the plot already drawn is shown, not redrawn


def test_plot_of_a_read_only_store_goes_elsewhere(done_store, tmp_path):
    store, rid = done_store
    (store / "runs" / rid / "curves.png").unlink()
    before = _snapshot(store)
    _read_only(store)
    try:
        res = invoke("plot", rid, "--store", str(store))
        under_file = invoke("plot", rid, "--store", str(store), "-o", str(tmp_path / "f" / "c.png"))
    finally:
        _writable_again(store)
    assert res.exit_code == 0, res.output
    assert _snapshot(store) == before and "plot: " in res.stdout
    assert not Path(res.stdout.split("plot: ")[1].strip()).is_relative_to(store)
    (tmp_path / "g").write_text("x")
    res = invoke("plot", rid, "--store", str(store), "-o", str(tmp_path / "g" / "c.png"))
    assert "cannot write the plot" in one_line_error(res, 2)
    assert under_file.exit_code == 0  # a missing folder for --out is created


@pytest.mark.parametrize(
    "args",
    [
        ["runs"],
        ["show", "abc"],
        ["export", "abc"],
        ["plot", "abc"],
        ["report", "abc"],
        ["claims", "report"],
        ["site", "SITE"],
        ["rm", "--failed"],
    ],
)
def test_a_store_that_does_not_exist_is_an_error_for_reading_commands(tmp_path, args):
    missing = tmp_path / "typo"
    args = [str(tmp_path / "site") if a == "SITE" else a for a in args]
    line = one_line_error(invoke(*args, "--store", str(missing)), 2)
    assert f"no genlab store at {missing} (--store)" in line and "does not exist" in line
    assert not missing.exists()


def test_an_empty_folder_is_not_a_store_for_reading_commands(tmp_path):
    line = one_line_error(invoke("runs", "--store", str(tmp_path)), 2)
    assert "holds no genlab.db" in line


def test_genlab_store_variable_naming_a_missing_store(tmp_path, monkeypatch):
    monkeypatch.setenv("GENLAB_STORE", str(tmp_path / "typo"))
    assert "($GENLAB_STORE)" in one_line_error(invoke("runs"), 2)


CRASHING = '''
import torch
from torch import nn
from genlab.models import MODELS


@MODELS.register("{name}")
class Crashing(nn.Module):
    """Crashes in forward."""

    def __init__(self, params, info):
        super().__init__()
        self.lin = nn.Linear(3, info.n_outputs)
        if {at_build}:
            raise KeyError("no such layer")

    def forward(self, x):
        raise RuntimeError("forward exploded")
'''


def _crashing(tmp_path: Path, name: str, at_build: bool = False) -> Path:
    f = tmp_path / f"{name}.py"
    f.write_text(textwrap.dedent(CRASHING.format(name=name, at_build=at_build)))
    return f


def test_crash_in_a_model_forward_is_a_failed_run_with_one_line(tmp_path):
    plugin = _crashing(tmp_path, "crash_fwd")
    store = str(tmp_path / "store")
    res = invoke(
        "--import",
        str(plugin),
        "run",
        "dg-colored",
        "steps=5",
        "model.name=crash_fwd",
        "model.params={}",
        "--store",
        store,
    )
    line = one_line_error(res, 1)
    assert "failed at step 0: RuntimeError: forward exploded" in line
    assert f"({plugin}:18)" in line  # the line of the plugin that raised
    runs = json.loads(invoke("runs", "--store", store, "--json").stdout)
    assert [r["status"] for r in runs] == ["failed"]
    shown = json.loads(invoke("show", runs[0]["run_id"], "--store", store, "--json").stdout)
    assert "forward exploded" in shown["error"]


def test_crash_in_a_model_constructor_exits_2_naming_the_line(tmp_path):
    plugin = _crashing(tmp_path, "crash_build", at_build=True)
    store = tmp_path / "store"
    res = invoke(
        "--import",
        str(plugin),
        "run",
        "dg-colored",
        "steps=5",
        "model.name=crash_build",
        "model.params={}",
        "--store",
        str(store),
    )
    line = one_line_error(res, 2)
    assert "could not be built: KeyError: 'no such layer'" in line and f"{plugin}:15" in line
    assert not store.exists()


def test_chmod_store_is_read_only_even_for_root(done_store):
    """What the tests above rely on: genlab reads the bits rather than trying to write."""
    store, _ = done_store
    _read_only(store)
    try:
        from genlab.store import Store

        assert Store(store).read_only()
    finally:
        _writable_again(store)
    assert not Store(store).read_only() and os.access(store, os.W_OK)


LOSS_CRASH = '''
from genlab.methods import METHODS, Method


@METHODS.register("crash_loss")
class CrashingLoss(Method):
    """Crashes in its loss."""

    def loss(self, model, batches):
        raise ZeroDivisionError("loss exploded")
'''


def test_crash_in_a_loss_is_a_failed_run_with_one_line(tmp_path):
    plugin = tmp_path / "crash_loss.py"
    plugin.write_text(LOSS_CRASH)
    store = str(tmp_path / "store")
    res = invoke(
        "--import",
        str(plugin),
        "run",
        "dg-colored",
        "steps=5",
        "method.name=crash_loss",
        "--store",
        store,
    )
    line = one_line_error(res, 1)
    assert f"failed at step 0: ZeroDivisionError: loss exploded ({plugin}:10)" in line
    assert [r["status"] for r in json.loads(invoke("runs", "--store", store, "--json").stdout)] == [
        "failed"
    ]
