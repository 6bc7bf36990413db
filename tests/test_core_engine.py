"""The run loop: determinism, no-op reruns, stop rules, divergence, resume after SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
import torch

from genlab.engine import run_spec
from genlab.errors import SpecError
from genlab.spec import load_run_spec
from genlab.store import Store

from .conftest import TINY


def test_same_spec_twice_gives_identical_metrics(tmp_path, tiny_spec):
    a, b = Store(tmp_path / "a"), Store(tmp_path / "b")
    ra, rb = run_spec(tiny_spec, a, progress=False), run_spec(tiny_spec, b, progress=False)
    assert ra.status == rb.status == "done"
    pd.testing.assert_frame_equal(a.metrics(ra.run_id), b.metrics(rb.run_id), check_exact=True)
    assert set(a.metrics(ra.run_id)["step"]) == {0, 1, 4, 15, 20, 40, 60}


def test_rerun_is_a_noop(store, tiny_spec):
    first = run_spec(tiny_spec, store, progress=False)
    again = run_spec(tiny_spec, store, progress=False)
    assert again.skipped and again.final == first.final
    assert len(store.runs()) == 1


def test_stop_rule_ends_the_run_early(store):
    spec = load_run_spec(
        "grokking",
        [
            *TINY,
            "steps=2000",
            "optimizer.lr=0.01",
            'stop=[{split="train/main", metric="accuracy", threshold=1.0, patience=2}]',
        ],
    )
    result = run_spec(spec, store, progress=False)
    assert result.status == "done" and result.step < 2000
    assert store.run(result.run_id)["summary"]["stopped_early"] is True


def test_stop_rule_on_unknown_split_fails_before_writing(store):
    spec = load_run_spec("grokking", [*TINY, 'stop=[{split="test/nope", threshold=0.9}]'])
    with pytest.raises(SpecError, match="no metric 'accuracy' on split 'test/nope'; available: "):
        run_spec(spec, store, progress=False)
    assert not store.root.exists()


def test_nan_loss_marks_the_run_diverged(store):
    spec = load_run_spec("grokking", [*TINY, 'optimizer.name="sgd"', "optimizer.lr=1e30"])
    result = run_spec(spec, store, progress=False)
    assert result.status == "diverged"
    row = store.run(result.run_id)
    assert row["status"] == "diverged" and "non-finite loss" in row["error"]
    assert f"at step {row['step']}" in row["error"]
    again = run_spec(spec, store, progress=False)  # deterministic: not trained a second time
    assert again.skipped and again.status == "diverged"


def test_float64_runs_in_float64(store):
    spec = load_run_spec("grokking", [*TINY, 'dtype="float64"', "steps=5"])
    res = run_spec(spec, store, progress=False)
    assert res.status == "done"
    final = torch.load(store.run_dir(res.run_id) / "model.pt", weights_only=True)["model"]
    floats = {k: v.dtype for k, v in final.items() if v.is_floating_point()}
    assert floats and set(floats.values()) == {torch.float64}, floats
    spec32 = load_run_spec("grokking", [*TINY, "steps=5"])
    res32 = run_spec(spec32, store, progress=False)
    loss64, loss32 = res.final["train/main:loss"], res32.final["train/main:loss"]
    assert loss64 != loss32 and loss64 == pytest.approx(
        loss32, rel=1e-3
    )  # same run, other precision


SLOW = [
    "task.p=31",
    "steps=200",
    "batch_size=100000",
    "eval.every=50",
    "eval.log_points=5",
    "checkpoint_every=20",
    "stop=[]",
    "model.n_layers=1",
    "model.d_model=32",
]


@pytest.mark.slow  # 6 s on a quiet machine
def test_sigkill_then_resume_matches_an_uninterrupted_run(tmp_path):
    spec = load_run_spec("grokking", SLOW)
    killed = Store(tmp_path / "killed")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "GENLAB_STORE": str(killed.root)}
    cmd = [sys.executable, "-m", "genlab", "run", "grokking", *SLOW, "--quiet", "--no-plot"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ckpt = killed.run_dir(spec.run_id) / "last.pt"
    deadline = time.time() + 120
    while not ckpt.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()[-2000:]
    killed = Store(killed.root)
    assert killed.status(spec.run_id) == "interrupted"  # its holder is dead

    resumed = run_spec(spec, killed, progress=False)
    assert resumed.status == "done" and resumed.resumed_from and resumed.resumed_from > 0

    ref_store = Store(tmp_path / "ref")
    ref = run_spec(spec, ref_store, progress=False)
    assert resumed.final == ref.final
    pd.testing.assert_frame_equal(
        killed.metrics(spec.run_id), ref_store.metrics(spec.run_id), check_exact=True
    )  # resume is exact


def test_grad_clip_caps_the_gradient_norm():
    import torch

    from genlab.engine import prepare

    prep = prepare(load_run_spec("grokking", [*TINY, "optimizer.grad_clip=0.001"]))
    prep.method.step(prep.model, prep.optimizer, prep.sampler.next())
    norm = torch.nn.utils.get_total_norm([p.grad for p in prep.model.parameters()])
    assert norm <= 0.001 * (1 + 1e-4)
    free = prepare(load_run_spec("grokking", TINY))
    free.method.step(free.model, free.optimizer, free.sampler.next())
    assert torch.nn.utils.get_total_norm([p.grad for p in free.model.parameters()]) > 0.01
