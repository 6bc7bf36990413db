"""A tiny DomainBed-style sweep (2 methods x 2 held-out envs x 2 seeds, 51 steps) and its report.

The same file format as ``examples/sweeps/domainbed_digits.toml``; ``genlab report --format md``
must show a mean [95% CI] and the worst test environment per group.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genlab.cli.app import app
from genlab.sweep.spec import load_sweep

ROOT = Path(__file__).resolve().parents[1]
CI = re.compile(r"^\d\.\d{3} \[-?\d\.\d{3}, \d\.\d{3}\]$")  # "0.463 [0.410, 0.516]"

TINY = """
name = "domainbed-tiny"
base = "dg-colored"
set = ["steps=51", "eval.every=25", "checkpoint_every=51", "model.width=32"]
seeds = 2
[grid]
task = [
  { name = "colored_digits", params = { test_envs = [0] } },
  { name = "colored_digits", params = { test_envs = [2] } },
]
"method.name" = ["erm", "groupdro"]
"""


def _table(md: str, heading: str) -> list[list[str]]:
    """The body rows of the first markdown table after ``## heading``."""
    lines = md.split(f"## {heading}", 1)[1].splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("|"))
    rows = []
    for ln in lines[start:]:
        if not ln.startswith("|"):
            break
        rows.append([c.strip() for c in ln.strip().strip("|").split("|")])
    return rows


@pytest.fixture(scope="module")
def report_md(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("dg2")
    sweep = root / "tiny.toml"
    sweep.write_text(TINY)
    store = str(root / "store")
    res = CliRunner().invoke(app, ["sweep", str(sweep), "--store", store, "-q"])
    assert res.exit_code == 0, res.output
    out = root / "report.md"
    res = CliRunner().invoke(
        app, ["report", "domainbed-tiny", "--format", "md", "--store", store, "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    return out.read_text()


def test_example_sweep_expands_to_the_domainbed_grid():
    sweep, folder = load_sweep(ROOT / "examples/sweeps/domainbed_digits.toml")
    runs = sweep.expand(folder)
    methods = {s.method.name for _, s in runs}
    anneal = {
        s.method.params.get(f"{s.method.name}_penalty_anneal_iters")
        for _, s in runs
        if s.method.name in ("irm", "vrex")
    }
    assert anneal == {30} and runs[0][1].steps == 301  # DomainBed's 500 of 5,000, scaled
    settings = {(s.task.name, tuple(s.task.params["test_envs"])) for _, s in runs}
    assert methods == {"erm", "irm", "groupdro", "coral"}
    assert len(settings) == 3  # every environment of colored_digits held out once
    assert len(runs) == 4 * 3 * 20 * 3  # methods x settings x random draws x trials


def test_report_has_ci_and_worst_environment_per_group(report_md):
    header, _, *rows = _table(report_md, "Test environments: mean and worst")
    assert header[:5] == ["group", "test envs", "mean over envs", "worst env", "worst"]
    assert len(rows) == 4  # 2 methods x 2 held-out environments
    for row in rows:
        assert CI.match(row[2]) and CI.match(row[4]), row
        assert row[3] in {"+90%", "-90%"}
    assert {r[0].split(",")[0] for r in rows} == {"method.name=erm", "method.name=groupdro"}


def test_report_has_one_row_per_method(report_md):
    rows = next(
        (
            _table(report_md, h)[2:]
            for h in ("DomainBed", "Held-out environments")
            if h in report_md
        ),
        _table(report_md, "Test environments: mean and worst")[2:],
    )
    assert len(rows) == 2  # erm, groupdro
    assert all(any(CI.match(c) for c in r) for r in rows)
