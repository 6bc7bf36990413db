"""A sweep killed with SIGKILL and started again runs only what is missing, resuming the run the
dead process left ``running`` from its checkpoint; nothing finished is repeated or lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from typer.testing import CliRunner

from genlab.cli import app
from genlab.engine import run_spec
from genlab.store import Store
from genlab.sweep import load_sweep, plan

SWEEP = """
name = "killme"
base = "grokking"
set = ["task.p=11", "model.name='mlp'", "model.width=32", "model.embed_dim=8", "steps=300",
       "eval.every=100", "eval.log_points=0", "checkpoint_every=25"]
unset = ["batch_size", "stop"]
seeds = 3
"""


def _rows(root):
    if not (root / "genlab.db").exists():
        return {}
    df = Store(root).runs()
    return {r.run_id: (r.status, r.step, r.finished) for r in df.itertuples()}


@pytest.mark.slow  # 6 s on a quiet machine
def test_sigkilled_sweep_resumes(tmp_path):
    f = tmp_path / "sweep.toml"
    f.write_text(SWEEP)
    root = tmp_path / "store"
    cmd = [sys.executable, "-m", "genlab.cli", "sweep", str(f), "--store", str(root), "-q"]
    code = "import sys; from genlab.cli import main; sys.argv = sys.argv[:1] + sys.argv[2:]; main()"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *cmd[2:]],
        start_new_session=True,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 120
    try:
        while time.time() < deadline:
            rows = _rows(root)
            done = [r for r in rows.values() if r[0] == "done"]
            mid = [r for r in rows.values() if r[0] == "running" and r[1] >= 25]
            if done and mid:
                break
            assert proc.poll() is None, "the sweep ended before it could be killed"
            time.sleep(0.05)
        else:
            raise AssertionError("no run was checkpointed in time")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = _rows(root)
    killed = [rid for rid, r in before.items() if r[0] == "interrupted"]  # holder dead
    finished = {rid: r for rid, r in before.items() if r[0] == "done"}
    assert len(killed) == 1 and finished

    res = CliRunner().invoke(app, ["sweep", str(f), "--store", str(root), "-q", "-e", "pool"])
    assert res.exit_code == 0, res.output
    after = _rows(root)
    assert len(after) == 3 and {r[0] for r in after.values()} == {"done"}
    for rid, r in finished.items():
        assert after[rid] == r  # not run again
    # the resumed run has exactly the numbers of an uninterrupted one
    sweep, base = load_sweep(f)
    spec = next(p["spec"] for p in plan(sweep, base) if p["run_id"] == killed[0])
    ref = Store(tmp_path / "ref")
    run_spec(spec, ref, progress=False)
    got = Store(root).metrics(killed[0])
    want = ref.metrics(killed[0])
    assert got[["step", "split", "metric"]].equals(want[["step", "split", "metric"]])
    assert np.array_equal(got["value"], want["value"], equal_nan=True)  # resume is exact
