"""Federated runs on Flower: a real 2-client, 2-round simulation per strategy, resume after a kill,
bad ``fed`` values exit 2, and specs without ``fed`` hashing as before."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from typer.testing import CliRunner

from genlab.cli import app
from genlab.engine import run_spec
from genlab.spec import load_run_spec
from genlab.store import Store

pytest.importorskip("flwr", reason="pip install 'genlab[fl]'")

TINY = [
    "task.train_size=300",
    "task.val_size=100",
    "model.width=16",
    "fed.clients=2",
    "fed.held_out=1",
    "fed.local_steps=10",
    "fed.alpha=0.5",
    "optimizer.name=adam",
    "optimizer.lr=0.01",
]


@pytest.mark.parametrize("method", ["fedavg", "fedprox", "fedimpro"])
def test_two_clients_two_rounds_through_flower(tmp_path, method: str) -> None:
    spec = load_run_spec("fed-digits", [*TINY, "steps=2", f"method={method}"])
    store = Store(tmp_path / "s")
    res = run_spec(spec, store, progress=False)
    assert res.status == "done" and res.step == 2
    m = store.metrics(spec.run_id)
    assert sorted(m["step"].unique()) == [0, 1, 2]
    splits = set(m["split"])
    assert {"client/0", "client/1", "client/2", "fed", "test/heldout", "val/main"} <= splits
    fed = m[(m["split"] == "fed") & (m["step"] == 2)].set_index("metric")["value"]
    assert 0 <= fed["update_dissimilarity"] <= 2 and math.isfinite(fed["train_loss"])
    assert 0 <= fed["heldout_clients_acc"] <= 1
    acc = m[(m["split"] == "test/heldout") & (m["metric"] == "accuracy")]["value"]
    assert acc.iloc[-1] > acc.iloc[0] + 0.05  # the global model learns through the rounds


def test_killed_simulation_resumes_at_its_last_round(tmp_path) -> None:
    spec = load_run_spec("fed-digits", [*TINY, "steps=4", "method=fedimpro"])
    whole = Store(tmp_path / "whole")
    run_spec(spec, whole, progress=False)

    def kill(rnd: int, _metrics: object) -> None:
        if rnd == 2:
            raise KeyboardInterrupt

    store = Store(tmp_path / "killed")
    with pytest.raises(KeyboardInterrupt):
        run_spec(spec, store, progress=False, on_eval=kill)
    assert store.status(spec.run_id) == "interrupted"
    res = run_spec(spec, store, progress=False)
    assert res.resumed_from == 2 and res.status == "done"
    a, b = whole.metrics(spec.run_id), store.metrics(spec.run_id)
    key = ["step", "split", "metric"]
    a, b = a.sort_values(key).reset_index(drop=True), b.sort_values(key).reset_index(drop=True)
    assert a[key].equals(b[key])
    assert (a["value"] - b["value"]).abs().max() < 1e-9


@pytest.mark.slow  # a subprocess killed mid-run, then the run resumed and compared: ~15 s
def test_sigkilled_simulation_resumes_at_its_last_round(tmp_path) -> None:
    args = [*TINY, "steps=12", "method=fedimpro"]
    spec = load_run_spec("fed-digits", args)
    killed = Store(tmp_path / "killed")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "GENLAB_STORE": str(killed.root)}
    cmd = [sys.executable, "-m", "genlab", "run", "fed-digits", *args, "--quiet", "--no-plot"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ckpt = killed.run_dir(spec.run_id) / "last.pt"
    deadline = time.time() + 120
    while not ckpt.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()[-2000:]
    killed = Store(killed.root)
    assert killed.status(spec.run_id) == "interrupted"
    resumed = run_spec(spec, killed, progress=False)
    assert resumed.status == "done" and resumed.resumed_from and 0 < resumed.resumed_from < 12
    ref_store = Store(tmp_path / "ref")
    ref = run_spec(spec, ref_store, progress=False)
    assert resumed.final == ref.final
    pd.testing.assert_frame_equal(
        killed.metrics(spec.run_id), ref_store.metrics(spec.run_id), check_exact=True
    )


def test_bad_fed_values_exit_2_naming_the_field(tmp_path) -> None:
    for bad in ("fed.alpha=0", "fed.clients=1", "fed.skew=zipf"):
        res = CliRunner().invoke(
            app, ["run", "fed-digits", bad, "--store", str(tmp_path / "s"), "-q", "--no-plot"]
        )
        assert res.exit_code == 2, (bad, res.output)
        assert bad.split("=")[0].split(".")[1] in res.output


def test_specs_without_fed_serialise_as_before() -> None:
    spec = load_run_spec("grokking")
    assert '"fed"' not in spec.canonical_json()
    fed = load_run_spec("fed-digits")
    assert '"fed"' in fed.canonical_json()
    assert fed.method.name == "fedavg"
    assert load_run_spec("fed-digits", ["method=fedprox"]).method.params == {"mu": 0.01}


@pytest.mark.slow  # a local Ray start: ~20 s under load
def test_the_same_apps_run_under_flowers_own_simulation_engine(monkeypatch) -> None:
    """genlab's ServerApp and ClientApp under ``flwr.simulation.run_simulation`` (Ray backend)."""
    pytest.importorskip("ray", reason="Flower's simulation engine needs ray")
    from flwr.simulation import run_simulation

    from genlab.fed.client import make_client_app
    from genlab.fed.server import make_server_app

    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    spec = load_run_spec("fed-digits", [*TINY, "fed.held_out=0", "steps=2"])
    seen: list[tuple[int, float]] = []
    run_simulation(
        make_server_app(
            spec.canonical_json(), lambda r, m: seen.append((r, m["val/main:accuracy"]))
        ),
        make_client_app(spec.canonical_json()),
        num_supernodes=2,
        backend_config={
            "client_resources": {"num_cpus": 1, "num_gpus": 0.0},
            "init_args": {"num_cpus": 2, "include_dashboard": False},
        },
    )
    assert [r for r, _ in seen] == [0, 1, 2]
    assert seen[-1][1] > seen[0][1] + 0.05
