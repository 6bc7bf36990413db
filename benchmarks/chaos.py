"""Fault injection: kill runs and sweeps at random moments, fill the disk, damage the store; after
each fault genlab must resume to exactly the numbers of an uninterrupted run (issue 19).

Faults, each in a fresh ``genlab`` process:

- ``time``: SIGKILL at a random moment (start-up, training, evaluation, anything);
- ``ckpt-write``: SIGKILL in the middle of writing a checkpoint (a half-written temporary file);
- ``ckpt-rename``: SIGKILL between keeping the previous checkpoint and renaming the new one in;
- ``commit``: SIGKILL inside a store transaction, its statements run but not committed;
- ``sweep-parent``: SIGKILL of a pool sweep's parent alone; its workers must be gone in 5 s;
- ``sweep-worker``: a pool worker killed during a checkpoint write or a commit; the sweep must end
  with a clear error, its other worker gone;
- ``disk-full``: a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) the run outgrows: a clear
  error, no traceback, a readable store;
- ``corrupt-store``: a copy of the store with its header, or one page, overwritten: every command
  must report it naming the file, and leave its bytes as they were.

A fault *survives* when the store stays readable, no run is left ``running`` by a dead process,
no worker outlives its sweep, errors are clear (no traceback), and the next process resumes. At
the end every run is finished and compared, row for row, with an uninterrupted reference.
The last line reads ``faults=N survived=N rows_lost=0 rows_duplicated=0 finals_equal=1``.

    python benchmarks/chaos.py [--faults 24] [--seed 0]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

RUN = [
    "grokking",
    "task.p=23",
    "model.n_layers=1",
    "model.d_model=32",
    "steps=400",
    "batch_size=null",
    "eval.every=50",
    "eval.log_points=0",
    "checkpoint_every=20",
    "stop=[]",
]
SWEEP = """
name = "chaos"
base = "grokking"
set = ["task.p=11", "model.name='mlp'", "model.width=32", "model.embed_dim=8", "steps=2000",
       "eval.every=500", "eval.log_points=0", "checkpoint_every=100"]
unset = ["batch_size", "stop"]
seeds = 6
"""
IN_PROCESS = ("ckpt-write", "ckpt-rename", "commit")


# ---- inside a child process: kill this process at the k-th event of a kind ------------------


def _die(mark: str) -> None:
    """SIGKILL this process, unless another already died for this fault (pool workers share it)."""
    try:
        os.close(os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return
    os.kill(os.getpid(), signal.SIGKILL)


def install(kind: str, k: int, mark: str) -> None:
    """Patch this process so that it kills itself at the ``k``-th checkpoint save or commit."""
    if kind in ("ckpt-write", "ckpt-rename"):
        real, n, in_save = os.replace, [0], [False]

        def replace(src, dst, *a, **kw):  # checkpoint.save: [last -> prev,] tmp -> last
            src, dst = Path(src), Path(dst)
            saving = src.name.endswith(".tmp") or dst.name.endswith(".prev.pt")
            first = saving and not in_save[0]
            if first:
                n[0] += 1
                in_save[0] = True
            if src.name.endswith(".tmp"):
                in_save[0] = False
            if saving and n[0] == k:
                tmp = src if src.name.endswith(".tmp") else src.with_name(src.name + ".tmp")
                if kind == "ckpt-write" and first:
                    os.truncate(tmp, tmp.stat().st_size // 2)  # as if cut off while writing
                    _die(mark)
                if kind == "ckpt-rename" and src.name.endswith(".tmp"):
                    _die(mark)
            return real(src, dst, *a, **kw)

        os.replace = replace
    elif kind == "commit":
        from genlab.store import Store

        real_write, n = Store._write, [0]

        @contextmanager
        def _write(self):
            with real_write(self) as c:
                yield c
                n[0] += 1
                if n[0] == k:
                    _die(mark)  # the statements ran; COMMIT never comes

        Store._write = _write


def child(argv: list[str]) -> None:
    kind, k = os.environ["CHAOS_KILL"].split(":")
    install(kind, int(k), os.environ["CHAOS_MARK"])
    from genlab.cli import main

    sys.argv = ["genlab", *argv]
    main()


# ---- the harness ------------------------------------------------------------------------------


@dataclass
class Tally:
    faults: int = 0
    survived: int = 0
    log: list[str] = field(default_factory=list)

    def record(self, kind: str, ok: bool, note: str = "") -> None:
        self.faults += 1
        self.survived += ok
        line = f"fault {self.faults:2d} {kind:13s} {'survived' if ok else 'FAILED'} {note}"
        self.log.append(line)
        print(line, flush=True)


def _env() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1", "GENLAB_THREADS": "1"}


def launch(
    args: list[str], kind: str | None = None, k: int = 0, mark: str = "", preexec=None
) -> subprocess.Popen:
    env = _env()
    if kind in IN_PROCESS:
        cmd = [sys.executable, __file__, "--child", *args]
        env.update(CHAOS_KILL=f"{kind}:{k}", CHAOS_MARK=mark)
    else:
        cmd = [sys.executable, "-m", "genlab", *args]
    return subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=preexec,
    )


def children(pid: int) -> set[int]:
    """The pids of ``pid``'s children (Linux)."""
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            pass
    return out


def alive(pid: int) -> bool:
    """Running, and not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def outlived(pids: set[int], seconds: float = 5.0) -> set[int]:
    """Those of ``pids`` still alive after ``seconds`` (then killed)."""
    deadline = time.time() + seconds
    while time.time() < deadline and any(alive(p) for p in pids):
        time.sleep(0.1)
    left = {p for p in pids if alive(p)}
    for p in left:  # clean up, so that one failure does not disturb the next faults
        os.kill(p, signal.SIGKILL)
    return left


def _store_ok(root: Path) -> tuple[bool, str]:
    """Readable, and no run left ``running`` by a dead process."""
    from genlab.store import Store

    if not (root / "genlab.db").exists():
        return True, ""
    try:
        runs = Store(root).runs()
    except Exception as exc:
        return False, f"store unreadable: {exc}"
    stuck = runs[runs["status"] == "running"]
    return stuck.empty, "" if stuck.empty else f"{len(stuck)} run(s) stuck running"


def _clear(stderr: str) -> bool:
    return "Traceback" not in stderr and "error:" in stderr


def _last_error(stderr: str) -> str:
    """The error message of a genlab command, unwrapped (rich wraps it at 80 columns)."""
    text = " ".join(stderr.split())
    return text[text.rfind("error:") :] if "error:" in text else text[-200:]


def run_faults(
    n: int,
    tally: Tally,
    rng: random.Random,
    work: Path,
    kinds: tuple[str, ...] = ("time", *IN_PROCESS),
) -> list[tuple[Path, list]]:
    """``n`` faults on single runs, ``kinds`` in turn (new seeds as runs finish); returns
    (store, args) per run."""
    store, done, seed = work / "runs", [], 0
    args = ["run", *RUN, f"seed={seed}", "--store", str(store), "-q", "--no-plot"]
    pending_fault: str | None = None
    injected = 0
    while True:
        finishing = injected >= n
        kind = None if finishing else kinds[injected % len(kinds)]
        mark = str(work / f"mark-{time.monotonic_ns()}")
        k = rng.randint(1, 20)
        proc = launch(args, kind if kind != "time" else None, k, mark)
        if kind == "time":
            deadline = time.time() + rng.uniform(0.5, 12.0)
            while time.time() < deadline and proc.poll() is None:
                time.sleep(0.02)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        killed = proc.returncode == -signal.SIGKILL
        if pending_fault is not None:  # the previous fault survives if this process resumed
            ok_store, note = _store_ok(store)
            ok = ok_store and (killed or proc.returncode == 0)
            tally.record(pending_fault, ok, note or ("" if ok else err.strip()[-300:]))
            pending_fault = None
        if killed:
            injected += 1
            ok, note = _store_ok(store)
            if not ok:
                tally.record(kind or "?", False, note)
            else:
                pending_fault = kind
            continue
        if proc.returncode != 0:
            print(f"run failed: {err[-1000:]}", file=sys.stderr)
            return done
        done.append((store, args))
        if finishing:
            return done
        seed += 1
        args = ["run", *RUN, f"seed={seed}", "--store", str(store), "-q", "--no-plot"]


def sweep_faults(n: int, tally: Tally, rng: random.Random, work: Path) -> Path:
    """``n`` faults on a pool sweep; returns its store (trained to the end)."""
    f = work / "sweep.toml"
    f.write_text(SWEEP)
    store = work / "sweep"
    args = ["sweep", str(f), "--store", str(store), "-q", "-e", "pool", "-w", "2"]
    start, i = tally.faults, 0
    while tally.faults - start < n:
        i += 1
        if i % 2:
            proc = launch(args)
            workers: set[int] = set()
            while len(workers) < 2 and proc.poll() is None:
                workers |= children(proc.pid)
                time.sleep(0.05)
            deadline = time.time() + rng.uniform(0.2, 5.0)  # the workers are training
            while time.time() < deadline and proc.poll() is None:
                time.sleep(0.05)
            if proc.poll() is not None:
                _, err = proc.communicate()
                if proc.returncode != 0 or not workers:
                    tally.record("sweep-parent", False, err.strip()[-300:])
                    return store
                continue  # finished before the fault: not counted
            os.kill(proc.pid, signal.SIGKILL)  # the parent alone
            proc.communicate()
            left = outlived(workers)
            ok, note = _store_ok(store)
            tally.record(
                "sweep-parent",
                ok and not left,
                note
                or (
                    f"{len(left)} worker(s) outlived the sweep"
                    if left
                    else f"{len(workers)} workers gone"
                ),
            )
        else:
            kind = rng.choice(IN_PROCESS)
            mark = str(work / f"mark-{time.monotonic_ns()}")
            proc = launch(args, kind, rng.randint(1, 15), mark)
            workers = set()
            while proc.poll() is None:
                workers |= children(proc.pid)
                time.sleep(0.05)
            _, err = proc.communicate()
            if not Path(mark).exists():
                continue  # the sweep finished before the fault fired: not counted
            left = outlived(workers)
            ok, note = _store_ok(store)
            clear = proc.returncode == -signal.SIGKILL or _clear(err)
            tally.record(
                f"sweep-{kind}",
                ok and clear and not left,
                note or ("" if clear else err.strip()[-300:]) or f"exit {proc.returncode}",
            )
    proc = launch(args)  # resume to the end
    _, err = proc.communicate()
    if proc.returncode != 0:
        tally.record("sweep-final", False, err.strip()[-300:])
    return store


def disk_full(tally: Tally, work: Path, limit: int) -> None:
    """A run whose files may not grow past ``limit`` bytes, then the same run with room again."""
    store = work / f"full-{limit}"
    args = ["run", *RUN, "--store", str(store), "-q", "--no-plot"]

    def cap() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = launch(args, preexec=cap)
    _, err = proc.communicate()
    ok, note = _store_ok(store)
    clear = proc.returncode in (1, 2) and _clear(err)
    proc = launch(args)  # room again: it resumes and finishes
    _, err2 = proc.communicate()
    done = proc.returncode == 0
    msg = _last_error(err) or f"exit {proc.returncode}"
    tally.record("disk-full", ok and clear and done, note or msg)


def corrupt_store(tally: Tally, work: Path, source: Path, where: str) -> None:
    """A copy of ``source`` with its header (``where='header'``) or one page overwritten."""
    store = work / f"corrupt-{where}"
    shutil.copytree(source, store)
    db = store / "genlab.db"
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for p in store.glob("genlab.db-*"):
        p.unlink()
    data = bytearray(db.read_bytes())
    page = 4096
    at = 0 if where == "header" else page * (len(data) // page // 2)
    data[at : at + page] = random.Random(7).randbytes(page)
    db.write_bytes(bytes(data))
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    ok, notes = True, []
    for args in (
        ["run", *RUN, "seed=99", "--store", str(store), "-q", "--no-plot"],
        ["runs", "--store", str(store)],
    ):
        proc = launch(args)
        _, err = proc.communicate()
        said = str(db) in "".join(err.split()) and _clear(err)  # rich wraps long paths
        if args[0] == "run" or proc.returncode != 0:  # a read may not touch the damaged page
            ok &= proc.returncode == 2 and said
        notes.append(_last_error(err))
    ok &= hashlib.sha256(db.read_bytes()).hexdigest() == before
    tally.record("corrupt-store", ok, notes[0])


def compare(pairs: list[tuple[Path, list[str]]], sweep: Path | None, sweep_file: Path | None):
    """Rows lost, rows duplicated and whether every final value equals an uninterrupted run's."""
    import torch

    from genlab.engine import run_spec
    from genlab.spec import load_run_spec
    from genlab.store import Store
    from genlab.sweep import load_sweep, plan

    torch.set_num_threads(1)
    ref = Store(tempfile.mkdtemp(prefix="chaos-ref-"))
    jobs = []
    for store, args in pairs:
        overrides = [a for a in args[2 : args.index("--store")]]
        jobs.append((Store(store), load_run_spec(args[1], overrides)))
    if sweep is not None and sweep_file is not None:
        spec, base = load_sweep(sweep_file)
        jobs += [(Store(sweep), p["spec"]) for p in plan(spec, base)]
    lost = dup = 0
    equal = True
    keys = ["step", "split", "metric"]
    for store, spec in jobs:
        run_spec(spec, ref, progress=False)
        want, got = ref.metrics(spec.run_id), store.metrics(spec.run_id)
        dup += len(got) - len(got.drop_duplicates(keys))
        merged = want.merge(got, on=keys, how="outer", suffixes=("_ref", "_got"), indicator=True)
        lost += int((merged["_merge"] == "left_only").sum())
        dup += int((merged["_merge"] == "right_only").sum())
        both = merged[merged["_merge"] == "both"]
        equal &= bool((both["value_ref"] == both["value_got"]).all())
        equal &= store.status(spec.run_id) == "done"
    return lost, dup, equal, len(jobs)


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--faults", type=int, default=24, help="at least 8")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="genlab-chaos-"))
    t0 = time.perf_counter()
    tally = Tally()
    n_sweep = max(2, args.faults // 4)
    n_run = max(4, args.faults - n_sweep - 4)
    print(
        f"load {os.getloadavg()[0]:.1f} at start; {n_run} run faults, {n_sweep} sweep faults, "
        "2 disk-full, 2 corrupt-store",
        flush=True,
    )
    runs = run_faults(n_run, tally, rng, work)
    sweep = sweep_faults(n_sweep, tally, rng, work)
    disk_full(tally, work, 48 * 1024)  # the checkpoint outgrows it
    disk_full(tally, work, 8 * 1024)  # so does the store
    corrupt_store(tally, work, runs[0][0], "header")
    corrupt_store(tally, work, runs[0][0], "page")
    lost, dup, equal, n_runs = compare(runs, sweep, work / "sweep.toml")
    print(
        f"{n_runs} runs compared with uninterrupted references in "
        f"{time.perf_counter() - t0:.0f}s (work dir {work})"
    )
    line = (
        f"faults={tally.faults} survived={tally.survived} rows_lost={lost} "
        f"rows_duplicated={dup} finals_equal={int(equal)}"
    )
    print(line)
    return line


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
    else:
        main()
