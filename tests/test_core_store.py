"""The SQLite store: concurrent writers, bad files, read-only stores, prefixes."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3

import pytest

from genlab.errors import StoreError
from genlab.store import Store

N_ROWS = 300


def _writer(root: str, run_id: str) -> None:
    store = Store(root)
    store.begin(run_id, "{}")
    for step in range(N_ROWS):  # one transaction per row: maximal contention
        store.log_metrics(run_id, [(step, "train/main", "accuracy", step / N_ROWS)])
    store.finish(run_id, "done", N_ROWS, 1.0)


def test_two_processes_write_one_store_without_loss(tmp_path):
    root = str(tmp_path / "store")
    procs = [mp.get_context("spawn").Process(target=_writer, args=(root, f"r{i}")) for i in (0, 1)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    store = Store(root)
    df = store.metrics(["r0", "r1"])
    assert len(df) == 2 * N_ROWS
    assert set(store.runs()["status"]) == {"done"}


def test_not_a_genlab_database(tmp_path):
    root = tmp_path / "store"
    root.mkdir()
    (root / "genlab.db").write_text("this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not a genlab store"):
        Store(root)
    other = tmp_path / "other"
    other.mkdir()
    sqlite3.connect(other / "genlab.db").execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(StoreError, match="SQLite file but not a genlab store"):
        Store(other)


def test_store_path_that_is_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(StoreError, match="is a file"):
        Store(f)


def test_read_only_store(tmp_path):
    root = tmp_path / "store"
    Store(root).begin("r0", "{}")
    (root / "genlab.db").chmod(0o444)
    store = Store(root)
    assert store.status("r0") == "running"  # reading still works
    with pytest.raises(StoreError, match="read-only"):
        store.begin("r1", "{}")


def test_resolve_prefix(store):
    store.begin("abc123", "{}")
    store.begin("abd456", "{}")
    assert store.resolve("abc") == "abc123"
    with pytest.raises(StoreError, match="matches 2 runs"):
        store.resolve("ab")
    with pytest.raises(StoreError, match="no run matching"):
        store.resolve("zz")


def test_opening_creates_nothing(tmp_path):
    store = Store(tmp_path / "store")
    assert store.runs().empty
    assert not (tmp_path / "store").exists()
