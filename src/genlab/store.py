"""The store: one SQLite database (WAL) holding runs, long-format metrics and artifacts.

Layout under the store root (``./genlab-runs`` by default, ``--store PATH`` or ``GENLAB_STORE``)::

    genlab.db            runs, metrics (run_id, step, split, metric, value), artifacts
    runs/<run_id>/       checkpoints, the final model, plots

Several processes may write at once: every write is one short ``BEGIN IMMEDIATE`` transaction and
SQLite's busy timeout makes writers wait their turn instead of failing.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from genlab import __version__
from genlab.errors import StoreError

SCHEMA = "genlab-store/1"
DB_NAME = "genlab.db"
STATUSES = ("running", "done", "diverged", "failed", "interrupted")

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, spec TEXT NOT NULL, status TEXT NOT NULL, step INTEGER DEFAULT 0,
    created REAL, started REAL, finished REAL, wall_s REAL DEFAULT 0, error TEXT,
    host TEXT, pid INTEGER, version TEXT, summary TEXT
);
CREATE TABLE IF NOT EXISTS metrics (
    run_id TEXT NOT NULL, step INTEGER NOT NULL, split TEXT NOT NULL, metric TEXT NOT NULL,
    value REAL, PRIMARY KEY (run_id, step, split, metric)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS artifacts (
    run_id TEXT NOT NULL, name TEXT NOT NULL, path TEXT NOT NULL, PRIMARY KEY (run_id, name)
);
CREATE TABLE IF NOT EXISTS verdicts (
    claim_id TEXT NOT NULL, config_id TEXT NOT NULL, budget TEXT NOT NULL, config TEXT NOT NULL,
    verdict TEXT NOT NULL, statistic TEXT NOT NULL, evidence TEXT NOT NULL, figure TEXT,
    run_ids TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (claim_id, config_id)
);
"""


_VERDICT_EXTRAS = """
CREATE TABLE IF NOT EXISTS verdict_extras (
    claim_id TEXT NOT NULL, config_id TEXT NOT NULL, extras TEXT NOT NULL,
    PRIMARY KEY (claim_id, config_id)
);
"""

_SWEEPS = """
CREATE TABLE IF NOT EXISTS sweeps (
    sweep_id TEXT PRIMARY KEY, name TEXT NOT NULL, spec TEXT NOT NULL, runs TEXT NOT NULL,
    created REAL NOT NULL
);
"""


def default_root() -> Path:
    return Path(os.environ.get("GENLAB_STORE") or "genlab-runs")


def _writable(path: Path) -> bool:
    """Writable by us *and* not marked read-only (root may write anything; we honour the bits)."""
    return os.access(path, os.W_OK) and bool(path.stat().st_mode & 0o222)


def _pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Store:
    """A genlab store at ``root``. Opening never creates anything; the first write does."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_root()
        self.db_path = self.root / DB_NAME
        if self.root.exists() and not self.root.is_dir():
            raise StoreError(
                f"store {self.root} is a file; a store is a directory holding {DB_NAME}"
            )
        self._conn: sqlite3.Connection | None = None
        self._writable = False
        if self.db_path.exists():
            self._connect(write=False)

    # ---- connection -------------------------------------------------------------------------

    def _connect(self, write: bool) -> sqlite3.Connection:
        if self._conn is not None and (self._writable or not write):
            return self._conn
        if write:
            if self.root.exists() and not _writable(self.root):
                raise StoreError(f"store {self.root} is read-only; pass a writable --store PATH")
            if self.db_path.exists() and not _writable(self.db_path):
                raise StoreError(f"store database {self.db_path} is read-only")
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create store {self.root}: {exc.strerror}") from None
        if self._conn is not None:
            self._conn.close()
        try:
            if write:
                conn = sqlite3.connect(self.db_path, timeout=60, isolation_level=None)
            else:
                conn = sqlite3.connect(
                    f"file:{self.db_path}?mode=ro", uri=True, timeout=60, isolation_level=None
                )
            conn.execute("PRAGMA busy_timeout = 60000")
            self._check_schema(conn, create=write)
            if write:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.db_path} is not a genlab store ({exc})") from None
        self._conn, self._writable = conn, write
        return conn

    def _check_schema(self, conn: sqlite3.Connection, create: bool) -> None:
        """Refuse foreign databases; a writer creates (or extends) the tables in one transaction."""
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if tables and "meta" not in tables:
            raise StoreError(f"{self.db_path} is an SQLite file but not a genlab store")
        if "meta" in tables:
            row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None or row[0] != SCHEMA:
                raise StoreError(f"{self.db_path} is not a genlab store (schema {row})")
        if create:
            conn.executescript(
                f"BEGIN IMMEDIATE; {_TABLES}"
                f"INSERT OR IGNORE INTO meta VALUES ('schema', '{SCHEMA}'); COMMIT;"
            )

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self._connect(write=True)
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise StoreError(f"cannot write to store {self.root}: {exc}") from None
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _read(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        if self._conn is None:
            if not self.db_path.exists():
                return []
            self._connect(write=False)  # another process (a pool worker) created it since
            assert self._conn is not None
        return self._conn.execute(sql, args).fetchall()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def run_dir(self, run_id: str) -> Path:
        return self.root / "runs" / run_id

    # ---- runs -------------------------------------------------------------------------------

    def begin(self, run_id: str, spec_json: str) -> None:
        """Mark ``run_id`` running in this process (inserting it on first use)."""
        now = time.time()
        with self._write() as c:
            c.execute(
                "INSERT INTO runs (run_id, spec, status, created, started, host, pid, version)"
                " VALUES (?, ?, 'running', ?, ?, ?, ?, ?) ON CONFLICT(run_id) DO UPDATE SET"
                " status='running', started=excluded.started, host=excluded.host,"
                " pid=excluded.pid, version=excluded.version, error=NULL",
                (run_id, spec_json, now, now, socket.gethostname(), os.getpid(), __version__),
            )

    def progress(self, run_id: str, step: int, wall_s: float) -> None:
        with self._write() as c:
            c.execute("UPDATE runs SET step=?, wall_s=? WHERE run_id=?", (step, wall_s, run_id))

    def finish(
        self,
        run_id: str,
        status: str,
        step: int,
        wall_s: float,
        error: str | None = None,
        summary: dict[str, Any] | None = None,
    ) -> None:
        assert status in STATUSES, status
        with self._write() as c:
            c.execute(
                "UPDATE runs SET status=?, step=?, wall_s=?, finished=?, error=?, summary=?"
                " WHERE run_id=?",
                (status, step, wall_s, time.time(), error, json.dumps(summary or {}), run_id),
            )

    def status(self, run_id: str) -> str | None:
        rows = self._read("SELECT status FROM runs WHERE run_id=?", (run_id,))
        return rows[0][0] if rows else None

    def is_live(self, run_id: str) -> bool:
        """Whether a process on this host is still running ``run_id``."""
        rows = self._read("SELECT status, host, pid FROM runs WHERE run_id=?", (run_id,))
        if not rows or rows[0][0] != "running":
            return False
        status, host, pid = rows[0]
        return host == socket.gethostname() and pid != os.getpid() and _pid_alive(pid)

    def run(self, run_id: str) -> dict[str, Any]:
        """One run's row, with ``spec`` and ``summary`` parsed."""
        df = self.runs(where="run_id = ?", args=(run_id,))
        if df.empty:
            raise StoreError(f"no run {run_id!r} in store {self.root}")
        row = df.iloc[0].to_dict()
        row["spec"] = json.loads(row["spec"])
        row["summary"] = json.loads(row["summary"]) if row["summary"] else {}
        return row

    def runs(self, where: str = "1", args: tuple[Any, ...] = ()) -> pd.DataFrame:
        cols = [
            "run_id", "status", "step", "created", "started", "finished", "wall_s", "error",
            "host", "pid", "version", "spec", "summary",
        ]  # fmt: skip
        rows = self._read(
            f"SELECT {', '.join(cols)} FROM runs WHERE {where} ORDER BY created", args
        )
        return pd.DataFrame(rows, columns=cols)

    def resolve(self, prefix: str) -> str:
        """A run id from a unique prefix of it (as git does for commits)."""
        rows = self._read("SELECT run_id FROM runs WHERE run_id LIKE ?", (prefix + "%",))
        if not rows:
            raise StoreError(f"no run matching {prefix!r} in store {self.root}")
        if len(rows) > 1:
            raise StoreError(f"{prefix!r} matches {len(rows)} runs; give more characters")
        return rows[0][0]

    # ---- metrics and artifacts --------------------------------------------------------------

    def log_metrics(self, run_id: str, rows: Iterable[tuple[int, str, str, float]]) -> None:
        with self._write() as c:
            c.executemany(
                "INSERT OR REPLACE INTO metrics VALUES (?, ?, ?, ?, ?)",
                [(run_id, int(s), sp, m, float(v)) for s, sp, m, v in rows],
            )

    def drop_metrics_after(self, run_id: str, step: int) -> None:
        """Forget metrics past ``step`` (a resumed run recomputes them)."""
        with self._write() as c:
            c.execute("DELETE FROM metrics WHERE run_id=? AND step>?", (run_id, step))

    def metrics(self, run_ids: str | Iterable[str] | None = None) -> pd.DataFrame:
        """Long-format metrics ``run_id, step, split, metric, value`` of the given runs (all runs
        when None)."""
        cols = ["run_id", "step", "split", "metric", "value"]
        if run_ids is None:
            return pd.DataFrame(self._read(f"SELECT {', '.join(cols)} FROM metrics ORDER BY "
                                           "run_id, step, split, metric"), columns=cols)  # fmt: skip
        ids = [run_ids] if isinstance(run_ids, str) else list(run_ids)
        if not ids:
            return pd.DataFrame(columns=cols)
        marks = ",".join("?" * len(ids))
        rows = self._read(
            f"SELECT {', '.join(cols)} FROM metrics WHERE run_id IN ({marks})"
            " ORDER BY run_id, step, split, metric",
            tuple(ids),
        )
        return pd.DataFrame(rows, columns=cols)

    def add_artifact(self, run_id: str, name: str, path: str | Path) -> None:
        with self._write() as c:
            c.execute(
                "INSERT OR REPLACE INTO artifacts VALUES (?, ?, ?)", (run_id, name, str(path))
            )

    def artifacts(self, run_id: str) -> dict[str, str]:
        return dict(self._read("SELECT name, path FROM artifacts WHERE run_id=?", (run_id,)))

    # ---- claim verdicts ---------------------------------------------------------------------

    def save_verdict(self, row: dict[str, Any]) -> None:
        """Record a claim's verdict for one configuration (replacing an earlier one)."""
        cols = ["claim_id", "config_id", "budget", "config", "verdict", "statistic", "evidence",
                "figure", "run_ids", "created"]  # fmt: skip
        vals = [row[c] if c not in ("config", "statistic", "run_ids") else json.dumps(row[c])
                for c in cols[:-1]] + [time.time()]  # fmt: skip
        with self._write() as c:
            c.execute(f"INSERT OR REPLACE INTO verdicts VALUES ({','.join('?' * len(cols))})", vals)

    def verdicts(self) -> pd.DataFrame:
        cols = ["claim_id", "config_id", "budget", "config", "verdict", "statistic", "evidence",
                "figure", "run_ids", "created"]  # fmt: skip
        df = pd.DataFrame(self._read(f"SELECT {', '.join(cols)} FROM verdicts ORDER BY created"),
                          columns=cols)  # fmt: skip
        for c in ("config", "statistic", "run_ids"):
            df[c] = df[c].map(json.loads)
        return df

    # ---- sweeps (the table is created on first use, so older stores open unchanged) ---------

    def _has_table(self, name: str) -> bool:
        return bool(
            self._read("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,))
        )

    def save_sweep(self, sweep_id: str, name: str, spec: dict[str, Any],
                   runs: list[dict[str, Any]]) -> None:  # fmt: skip
        """Record a sweep: its spec and, per run, ``{"run_id": ..., "labels": {axis: value}}``."""
        with self._write() as c:
            c.execute(_SWEEPS)
            c.execute(
                "INSERT OR REPLACE INTO sweeps VALUES (?, ?, ?, ?, ?)",
                (sweep_id, name, json.dumps(spec, sort_keys=True), json.dumps(runs), time.time()),
            )

    def sweeps(self) -> pd.DataFrame:
        """Every recorded sweep: ``sweep_id, name, n_runs, created``."""
        cols = ["sweep_id", "name", "n_runs", "created"]
        if not self._has_table("sweeps"):
            return pd.DataFrame(columns=cols)
        rows = self._read("SELECT sweep_id, name, runs, created FROM sweeps ORDER BY created")
        return pd.DataFrame([(a, b, len(json.loads(r)), t) for a, b, r, t in rows], columns=cols)

    def sweep(self, ref: str) -> dict[str, Any] | None:
        """A sweep by id (or unique id prefix) or by name (the latest of that name); None if none."""
        if not self._has_table("sweeps"):
            return None
        cols = "sweep_id, name, spec, runs, created"
        rows = self._read(f"SELECT {cols} FROM sweeps WHERE sweep_id LIKE ?", (ref + "%",))
        if len(rows) > 1:
            raise StoreError(f"{ref!r} matches {len(rows)} sweeps; give more characters")
        if not rows:
            rows = self._read(f"SELECT {cols} FROM sweeps WHERE name=? ORDER BY created DESC"
                              " LIMIT 1", (ref,))  # fmt: skip
        if not rows:
            return None
        sid, name, spec, runs, created = rows[0]
        return {"sweep_id": sid, "name": name, "spec": json.loads(spec), "runs": json.loads(runs),
                "created": created}  # fmt: skip

    # ---- what else a verdict keeps: provenance, its evidence table (created on first use) ------

    def save_verdict_extras(self, claim_id: str, config_id: str, extras: dict[str, Any]) -> None:
        """JSON beside a verdict: ``{"provenance": ..., "table": ...}`` (``claims.runner``)."""
        with self._write() as c:
            c.execute(_VERDICT_EXTRAS)
            c.execute("INSERT OR REPLACE INTO verdict_extras VALUES (?, ?, ?)",
                      (claim_id, config_id, json.dumps(extras)))  # fmt: skip

    def verdict_extras(self, claim_id: str, config_id: str) -> dict[str, Any]:
        if not self._has_table("verdict_extras"):
            return {}
        rows = self._read("SELECT extras FROM verdict_extras WHERE claim_id=? AND config_id=?",
                          (claim_id, config_id))  # fmt: skip
        return json.loads(rows[0][0]) if rows else {}
