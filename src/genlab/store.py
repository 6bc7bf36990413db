"""The store: one SQLite database (WAL) holding runs, long-format metrics and artifacts.

Layout under the store root (``./genlab-runs`` by default, ``--store PATH`` or ``GENLAB_STORE``)::

    genlab.db            runs, metrics (run_id, step, split, metric, value), artifacts
    runs/<run_id>/       checkpoints, the final model, plots

Several processes may write at once: every write is one short ``BEGIN IMMEDIATE`` transaction and
SQLite's busy timeout makes writers wait their turn instead of failing.

A run id is trained by one process at a time: the process holds the run's *lease* (table
``leases``: holder pid, host, the pid's start time, heartbeat). ``begin`` takes it and ``finish``
releases it; ``acquire`` takes it before any work. A holder is dead when, on this host, its pid is
gone (or now belongs to another process), or, on another host, its heartbeat is older than
``LEASE_TIMEOUT``; a dead holder's lease is taken over, and its run reads ``interrupted``.

A damaged database is reported (``StoreError`` naming the file) and never rewritten: writers run
SQLite's ``quick_check`` once per process before their first write, and every SQLite error
becomes a ``StoreError`` that says what happened (disk full, damaged, locked).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from genlab import __version__
from genlab.errors import GenlabError, StoreError

SCHEMA = "genlab-store/1"
DB_NAME = "genlab.db"
STATUSES = ("running", "done", "diverged", "failed", "interrupted")
LEASE_TIMEOUT = 120.0  # s without a heartbeat after which a holder on another host is dead
HOST = socket.gethostname()

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
CREATE TABLE IF NOT EXISTS leases (
    run_id TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL, pid_start TEXT,
    acquired REAL NOT NULL, heartbeat REAL NOT NULL
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

_CONTROL_VERDICTS = """
CREATE TABLE IF NOT EXISTS control_verdicts (
    claim_id TEXT NOT NULL, control TEXT NOT NULL, config_id TEXT NOT NULL, budget TEXT NOT NULL,
    verdict TEXT NOT NULL, statistic TEXT NOT NULL, evidence TEXT NOT NULL, run_ids TEXT NOT NULL,
    created REAL NOT NULL, PRIMARY KEY (claim_id, control, config_id)
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
    return _proc_stat(pid)[0] != "Z"  # a killed process its parent has not reaped yet is dead


def _proc_stat(pid: int) -> tuple[str | None, str | None]:
    """``pid``'s state letter and start time (clock ticks since boot) on Linux, else Nones."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return None, None
    return fields[0], fields[19]


def _pid_start(pid: int) -> str | None:
    """When ``pid`` started, to tell a reused pid apart."""
    return _proc_stat(pid)[1]


class RunBusy(GenlabError):
    """Another live process holds the run's lease."""

    def __init__(self, run_id: str, holder: Holder) -> None:
        super().__init__(f"run {run_id} is being trained by {holder}")
        self.run_id, self.holder = run_id, holder


@dataclass(frozen=True)
class Holder:
    """The process holding a run's lease."""

    pid: int
    host: str
    pid_start: str | None = None
    heartbeat: float = 0.0

    def __str__(self) -> str:
        return f"pid {self.pid} on {self.host}"

    @property
    def is_me(self) -> bool:
        return self.pid == os.getpid() and self.host == HOST

    def alive(self) -> bool:
        if self.host != HOST:
            return time.time() - self.heartbeat < LEASE_TIMEOUT
        if not _pid_alive(self.pid):
            return False
        start = _pid_start(self.pid)
        return not (self.pid_start and start and start != self.pid_start)


def _wal(conn: sqlite3.Connection, timeout: float = 60.0) -> None:
    """Put the database in WAL mode (it stays so). The switch needs an exclusive lock and SQLite
    answers "database is locked" at once, without its busy handler, when two processes create the
    same store together (CI, stop 27: 1 race in 60 with four processes), so retry until
    ``timeout``; a store already in WAL mode takes no lock at all."""
    deadline = time.monotonic() + timeout
    while conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _damage(db: Path, exc: sqlite3.Error) -> StoreError:
    """A StoreError that says what went wrong with the database ``db``."""
    msg = str(exc)
    if "malformed" in msg or "not a database" in msg or "corrupt" in msg:
        return StoreError(
            f"store database {db} is damaged ({msg}); genlab leaves it as it is: move it aside "
            "(or restore a copy) and run again"
        )
    if "full" in msg or "I/O error" in msg:
        return StoreError(
            f"cannot write to store {db.parent}: {msg} (is the disk full, or a file-size limit "
            "reached?); what was committed before is kept"
        )
    return StoreError(f"cannot use store {db}: {msg}")


_CHECKED: set[Path] = set()  # databases this process has checked before writing


VERDICT_COLUMNS = (
    "claim_id",
    "config_id",
    "budget",
    "config",
    "verdict",
    "statistic",
    "evidence",
    "figure",
    "run_ids",
    "created",
)  # the verdicts table's columns, in order


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
        self._tables: set[str] = set()
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
            self._check_schema(conn, create=False)
        except sqlite3.DatabaseError as exc:
            if "not a database" in str(exc):
                raise StoreError(f"{self.db_path} is not a genlab store ({exc})") from None
            raise _damage(self.db_path, exc) from None
        try:
            if write:
                self._check_integrity(conn)
                self._check_schema(conn, create=True)
                _wal(conn)
                conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise _damage(self.db_path, exc) from None
        self._conn, self._writable = conn, write
        return conn

    def _check_integrity(self, conn: sqlite3.Connection) -> None:
        """SQLite's ``quick_check`` (about 6 ms per MB), once per process, before writing."""
        key = self.db_path.resolve()
        if key in _CHECKED or not self.db_path.exists() or self.db_path.stat().st_size == 0:
            return
        problems = [r[0] for r in conn.execute("PRAGMA quick_check(3)").fetchall()]
        if problems != ["ok"]:
            raise sqlite3.DatabaseError("database disk image is malformed: " + "; ".join(problems))
        _CHECKED.add(key)

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
        except sqlite3.Error as exc:
            raise _damage(self.db_path, exc) from None
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            if isinstance(exc, sqlite3.Error):
                raise _damage(self.db_path, exc) from None
            raise

    def _read(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        if self._conn is None:
            if not self.db_path.exists():
                return []
            self._connect(write=False)  # another process (a pool worker) created it since
            assert self._conn is not None
        try:
            return self._conn.execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):  # created, but its first write never committed
                return []
            raise _damage(self.db_path, exc) from None
        except sqlite3.Error as exc:
            raise _damage(self.db_path, exc) from None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def read_only(self) -> bool:
        """Whether a write would be refused: the folder or its database marked read-only (as
        ``_connect`` judges it, so also for root). An absent store is not read-only."""
        if self.root.exists() and not _writable(self.root):
            return True
        return self.db_path.exists() and not _writable(self.db_path)

    def run_dir(self, run_id: str) -> Path:
        return self.root / "runs" / run_id

    # ---- runs -------------------------------------------------------------------------------

    def begin(self, run_id: str, spec_json: str) -> None:
        """Mark ``run_id`` running in this process (inserting it on first use), taking its lease;
        raises ``RunBusy`` if another live process holds it."""
        now = time.time()
        with self._write() as c:
            self._take_lease(c, run_id)
            c.execute(
                "INSERT INTO runs (run_id, spec, status, created, started, host, pid, version)"
                " VALUES (?, ?, 'running', ?, ?, ?, ?, ?) ON CONFLICT(run_id) DO UPDATE SET"
                " status='running', started=excluded.started, host=excluded.host,"
                " pid=excluded.pid, version=excluded.version, error=NULL",
                (run_id, spec_json, now, now, HOST, os.getpid(), __version__),
            )

    def progress(self, run_id: str, step: int, wall_s: float) -> None:
        with self._write() as c:
            c.execute("UPDATE runs SET step=?, wall_s=? WHERE run_id=?", (step, wall_s, run_id))
            self._beat(c, run_id)

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
            self._drop_lease(c, run_id)

    def status(self, run_id: str) -> str | None:
        """The run's status; ``running`` only while its holder lives, else ``interrupted``."""
        rows = self._read("SELECT status, host, pid FROM runs WHERE run_id=?", (run_id,))
        if not rows:
            return None
        status, host, pid = rows[0]
        if status == "running" and self._live_holder(run_id, host, pid) is None:
            return "interrupted"
        return status

    def is_live(self, run_id: str) -> bool:
        """Whether another live process is training ``run_id``."""
        holder = self.holder(run_id)
        return holder is not None and not holder.is_me

    # ---- leases -----------------------------------------------------------------------------

    def acquire(self, run_id: str) -> Holder | None:
        """Take the lease on ``run_id`` for this process (taking it over from a dead holder);
        return the live holder instead, taking nothing, if another process holds it."""
        try:
            with self._write() as c:
                self._take_lease(c, run_id)
        except RunBusy as busy:
            return busy.holder
        return None

    def release(self, run_id: str) -> None:
        """Give up this process's lease on ``run_id`` (nothing if it does not hold it)."""
        with self._write() as c:
            self._drop_lease(c, run_id)

    def heartbeat(self, run_id: str) -> None:
        """Tell other hosts this process still holds ``run_id``."""
        with self._write() as c:
            self._beat(c, run_id)

    def holder(self, run_id: str) -> Holder | None:
        """The live process holding ``run_id`` (this one included), or None."""
        rows = self._read("SELECT host, pid FROM runs WHERE run_id=?", (run_id,))
        host, pid = rows[0] if rows else (None, None)
        return self._live_holder(run_id, host, pid)

    def _live_holder(self, run_id: str, host: str | None, pid: int | None) -> Holder | None:
        leases = self._has_table("leases")
        sql = "SELECT pid, host, pid_start, heartbeat FROM leases WHERE run_id=?"
        rows = self._read(sql, (run_id,)) if leases else []
        if rows:
            holder = Holder(*rows[0])
        elif not leases and pid and host == HOST:  # a store from before leases: the row's pid
            holder = Holder(pid, host)
        else:
            return None
        return holder if holder.alive() else None

    def _take_lease(self, c: sqlite3.Connection, run_id: str) -> None:
        row = c.execute(
            "SELECT pid, host, pid_start, heartbeat FROM leases WHERE run_id=?", (run_id,)
        ).fetchone()
        if row is not None:
            holder = Holder(*row)
            if holder.is_me:
                return
            if holder.alive():
                raise RunBusy(run_id, holder)
        now = time.time()
        c.execute(
            "INSERT OR REPLACE INTO leases VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, os.getpid(), HOST, _pid_start(os.getpid()), now, now),
        )

    def _drop_lease(self, c: sqlite3.Connection, run_id: str) -> None:
        c.execute(
            "DELETE FROM leases WHERE run_id=? AND pid=? AND host=?", (run_id, os.getpid(), HOST)
        )

    def _beat(self, c: sqlite3.Connection, run_id: str) -> None:
        c.execute(
            "UPDATE leases SET heartbeat=? WHERE run_id=? AND pid=? AND host=?",
            (time.time(), run_id, os.getpid(), HOST),
        )

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
            "run_id",
            "status",
            "step",
            "created",
            "started",
            "finished",
            "wall_s",
            "error",
            "host",
            "pid",
            "version",
            "spec",
            "summary",
        ]
        rows = self._read(
            f"SELECT {', '.join(cols)} FROM runs WHERE {where} ORDER BY created", args
        )
        df = pd.DataFrame(rows, columns=cols)
        running = df["status"] == "running"
        if running.any():  # ``interrupted`` where the holder is dead
            df.loc[running, "status"] = [self.status(r) for r in df.loc[running, "run_id"]]
        return df

    def resolve(self, prefix: str) -> str:
        """A run id from a unique prefix of it (as git does for commits)."""
        rows = self._read("SELECT run_id FROM runs WHERE run_id LIKE ?", (prefix + "%",))
        if not rows:
            raise StoreError(f"no run matching {prefix!r} in store {self.root}")
        if len(rows) > 1:
            raise StoreError(f"{prefix!r} matches {len(rows)} runs; give more characters")
        return rows[0][0]

    def delete_runs(self, run_ids: Sequence[str]) -> None:
        """Delete runs with their metrics, artifacts and folders, all or none: the folders are
        moved aside first, the rows deleted in one transaction, and the folders moved back if it
        fails. A run that a live process is training is refused, with nothing deleted."""
        ids = list(dict.fromkeys(run_ids))
        self._connect(write=True)  # a read-only or damaged store: refused before anything moves
        for rid in ids:
            if self.is_live(rid):
                raise StoreError(
                    f"run {rid} is being trained by {self.holder(rid)}; nothing deleted"
                )
        moved: list[tuple[Path, Path]] = []
        try:
            for rid in ids:
                folder = self.run_dir(rid)
                if folder.exists():
                    aside = folder.with_name(f".deleting-{rid}")
                    folder.rename(aside)
                    moved.append((folder, aside))
            with self._write() as c:
                for rid in ids:
                    holder = self._live_holder(rid, None, None)
                    if holder is not None and not holder.is_me:
                        raise StoreError(f"run {rid} is being trained by {holder}; nothing deleted")
                for table in ("metrics", "artifacts", "leases", "runs"):
                    c.executemany(f"DELETE FROM {table} WHERE run_id=?", [(r,) for r in ids])
        except BaseException as exc:
            for folder, aside in reversed(moved):
                aside.rename(folder)
            if isinstance(exc, OSError):
                raise StoreError(
                    f"cannot delete from store {self.root}: {exc.strerror} "
                    f"({exc.filename}); nothing deleted"
                ) from None
            raise
        for _, aside in moved:
            shutil.rmtree(aside, ignore_errors=True)

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
            return pd.DataFrame(
                self._read(
                    f"SELECT {', '.join(cols)} FROM metrics ORDER BY run_id, step, split, metric"
                ),
                columns=cols,
            )
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
        cols = VERDICT_COLUMNS
        vals = [
            row[c] if c not in ("config", "statistic", "run_ids") else json.dumps(row[c])
            for c in cols[:-1]
        ] + [time.time()]
        with self._write() as c:
            c.execute(f"INSERT OR REPLACE INTO verdicts VALUES ({','.join('?' * len(cols))})", vals)

    def verdicts(self) -> pd.DataFrame:
        cols = VERDICT_COLUMNS
        df = pd.DataFrame(
            self._read(f"SELECT {', '.join(cols)} FROM verdicts ORDER BY created"), columns=cols
        )
        for c in ("config", "statistic", "run_ids"):
            df[c] = df[c].map(json.loads)
        return df

    def save_control_verdict(self, row: dict[str, Any]) -> None:
        """Record what a claim's control measured at one configuration (replacing an earlier one):
        ``claim_id, control, config_id, budget, verdict, statistic, evidence, run_ids``."""
        cols = [
            "claim_id",
            "control",
            "config_id",
            "budget",
            "verdict",
            "statistic",
            "evidence",
            "run_ids",
        ]
        vals = [json.dumps(row[c]) if c in ("statistic", "run_ids") else row[c] for c in cols]
        with self._write() as c:
            c.execute(_CONTROL_VERDICTS)
            c.execute(
                "INSERT OR REPLACE INTO control_verdicts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*vals, time.time()),
            )

    def control_verdicts(self, claim_id: str | None = None) -> pd.DataFrame:
        """Every recorded control verdict (of one claim), oldest first."""
        cols = [
            "claim_id",
            "control",
            "config_id",
            "budget",
            "verdict",
            "statistic",
            "evidence",
            "run_ids",
            "created",
        ]
        if not self._has_table("control_verdicts"):
            return pd.DataFrame(columns=cols)
        where, args = ("WHERE claim_id=?", (claim_id,)) if claim_id else ("", ())
        df = pd.DataFrame(
            self._read(
                f"SELECT {', '.join(cols)} FROM control_verdicts {where} ORDER BY created", args
            ),
            columns=cols,
        )
        for c in ("statistic", "run_ids"):
            df[c] = df[c].map(json.loads)
        return df

    # ---- sweeps (the table is created on first use, so older stores open unchanged) ---------

    def _has_table(self, name: str) -> bool:
        if name in self._tables:  # tables are never dropped
            return True
        if self._read("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)):
            self._tables.add(name)
            return True
        return False

    def save_sweep(
        self, sweep_id: str, name: str, spec: dict[str, Any], runs: list[dict[str, Any]]
    ) -> None:
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
            rows = self._read(
                f"SELECT {cols} FROM sweeps WHERE name=? ORDER BY created DESC LIMIT 1", (ref,)
            )
        if not rows:
            return None
        sid, name, spec, runs, created = rows[0]
        return {
            "sweep_id": sid,
            "name": name,
            "spec": json.loads(spec),
            "runs": json.loads(runs),
            "created": created,
        }

    # ---- what else a verdict keeps: provenance, its evidence table (created on first use) ------

    def save_verdict_extras(self, claim_id: str, config_id: str, extras: dict[str, Any]) -> None:
        """JSON beside a verdict: ``{"provenance": ..., "table": ...}`` (``claims.runner``)."""
        with self._write() as c:
            c.execute(_VERDICT_EXTRAS)
            c.execute(
                "INSERT OR REPLACE INTO verdict_extras VALUES (?, ?, ?)",
                (claim_id, config_id, json.dumps(extras)),
            )

    def verdict_extras(self, claim_id: str, config_id: str) -> dict[str, Any]:
        if not self._has_table("verdict_extras"):
            return {}
        rows = self._read(
            "SELECT extras FROM verdict_extras WHERE claim_id=? AND config_id=?",
            (claim_id, config_id),
        )
        return json.loads(rows[0][0]) if rows else {}
