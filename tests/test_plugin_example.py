"""The worked examples run as documented: examples/plugin (a user's Fishr method in a DomainBed
sweep beside ERM and IRM, at a tiny budget here) and the notebook-style examples/notebook.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "plugin"
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OMP_NUM_THREADS": "1"}


def genlab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "genlab", *args],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow  # ~8 s on a quiet 2-core machine
def test_plugin_example_sweep_reports_fishr_beside_erm_and_irm(tmp_path):
    sweep = tomllib.loads((EXAMPLE / "digits.toml").read_text())
    assert sweep["imports"] == ["./fishr.py"] and sweep["grid"]["method.name"] == [
        "erm",
        "irm",
        "fishr",
    ]
    # the example's own file, at a tiny budget: 20 steps, 1 seed, two held-out settings
    sweep |= {
        "imports": [str(EXAMPLE / "fishr.py")],
        "seeds": 1,
        "set": ["steps=20", "eval.every=10", "checkpoint_every=20"],
    }
    sweep["grid"]["task"] = sweep["grid"]["task"][:1] + sweep["grid"]["task"][3:4]
    tiny = tmp_path / "tiny.json"
    tiny.write_text(json.dumps(sweep))
    store = str(tmp_path / "store")
    res = genlab("sweep", str(tiny), "-e", "pool", "--workers", "2", "--store", store, "-q")
    assert res.returncode == 0, res.stderr + res.stdout
    assert "done" in res.stdout and "failed" not in res.stdout
    rep = genlab("report", "plugin-digits", "--store", store, "--format", "md")
    assert rep.returncode == 0, rep.stderr
    table = rep.stdout.split("DomainBed table")[1].split("\n\n## ")[0]
    rows = {line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| ")}
    assert {"erm", "irm", "fishr"} <= rows, table
    runs = json.loads(genlab("runs", "--store", store, "--json").stdout)
    fishr = [r for r in runs if r["method"] == "fishr"]
    assert len(runs) == 6 and len(fishr) == 2
    shown = json.loads(genlab("show", fishr[0]["run_id"], "--store", store, "--json").stdout)
    assert shown["spec"]["imports"][0]["module"] == "fishr"  # the file's hash is in the run id
    erm = next(r for r in runs if r["method"] == "erm")
    assert (
        "imports"
        not in json.loads(genlab("show", erm["run_id"], "--store", store, "--json").stdout)["spec"]
    )


@pytest.mark.slow  # ~7 s on a quiet 2-core machine
def test_notebook_example_runs(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "notebook.py"), str(tmp_path / "store")],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "'done': 5" in out.stdout  # the sweep's erm seed 0 is the first run: skipped
    for method in ("erm", "irm", "fishr"):
        assert f"\n{method} " in out.stdout
    assert "6 runs" in out.stdout
