"""Reports: tables with CIs in md/html/latex, a self-contained HTML file, and the claims report."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from typer.testing import CliRunner

from genlab.cli import app
from genlab.report.tables import fmt_ci, render_table
from genlab.store import Store

SWEEP = """
name = "tiny"
base = "grokking"
set = ["task.p=11", "model.name='mlp'", "model.width=16", "model.embed_dim=4", "steps=20",
       "eval.every=10", "eval.log_points=3"]
unset = ["batch_size", "stop"]
seeds = 2
[grid]
"optimizer.lr" = [1e-3, 1e-2]
"""


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    root = tmp_path_factory.mktemp("rep")
    f = root / "s.toml"
    f.write_text(SWEEP)
    res = CliRunner().invoke(
        app, ["sweep", str(f), "--store", str(root / "store"), "-q", "-e", "vmap"]
    )
    assert res.exit_code == 0, res.output
    return root


def test_fmt_ci_and_tables():
    assert fmt_ci(0.5, 0.25, 0.75) == "0.500 [0.250, 0.750]"
    assert fmt_ci(0.5, float("nan"), float("nan")) == "0.500"
    assert fmt_ci(float("nan"), 0, 1) == "–"
    df = pd.DataFrame({"a_b": ["x|y"], "v": [0.5]})
    assert "| x\\|y | 0.5 |" in render_table(df, "md")
    assert r"a\_b & v \\" in render_table(df, "latex")
    assert "<td>x|y</td>" in render_table(df, "html")


@pytest.mark.parametrize("fmt", ["md", "latex", "html"])
def test_sweep_report_in_each_format(swept, fmt):
    out = swept / f"report.{fmt}"
    res = CliRunner().invoke(
        app, ["report", "tiny", "--store", str(swept / "store"), "--format", fmt, "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert "optimizer.lr=0.001" in text and "optimizer.lr=0.01" in text
    assert re.search(r"\d\.\d{3} \[-?\d\.\d{3}, \d\.\d{3}\]", text)  # mean [lo, hi]
    assert "heldout" in text and "Paired comparisons" in text
    if fmt == "html":
        assert text.count("data:image/png;base64,") == 2
        assert not re.search(r'src="(?!data:)', text)  # nothing outside the file
    else:
        figs = swept / "report_figures"
        assert (figs / "curves.png").is_file() and (figs / "environments.png").is_file()
        assert "report_figures/curves.png" in text
    if fmt == "latex":
        assert r"\begin{tabular}" in text


def test_report_of_run_ids(swept):
    ids = Store(swept / "store").runs()["run_id"].tolist()[:2]
    res = CliRunner().invoke(
        app, ["report", *[i[:10] for i in ids], "--store", str(swept / "store")]
    )
    assert res.exit_code == 0, res.output
    assert "| group |" in res.output


@pytest.mark.parametrize("args", [["nosuchsweep"], ["tiny", "--format", "pdf"]])
def test_report_bad_input_exits_2(swept, args):
    res = CliRunner().invoke(app, ["report", *args, "--store", str(swept / "store")])
    assert res.exit_code == 2, res.output


def test_claims_report_lists_every_claim_with_verdict_and_paper(tmp_path):
    from genlab.claims import CLAIMS

    store = Store(tmp_path / "store")
    fig = tmp_path / "fig.png"
    import matplotlib.pyplot as plt

    plt.figure(figsize=(1, 1))
    plt.savefig(fig)
    plt.close()
    store.save_verdict(
        {
            "claim_id": "grokking.delayed_generalization",
            "config_id": "c",
            "budget": "smoke",
            "config": {},
            "verdict": "not reproduced",
            "statistic": {"x": 1.0},
            "evidence": "0/3 seeds grokked",
            "figure": str(fig),
            "run_ids": [],
        }
    )
    out = tmp_path / "claims.html"
    res = CliRunner().invoke(
        app, ["claims", "report", "--store", str(store.root), "--format", "html", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    text = out.read_text()
    for e in CLAIMS.entries():
        assert e.name in text
    assert "not reproduced" in text and "0/3 seeds grokked" in text
    assert "data:image/png;base64," in text
    # full references, also for papers outside the catalogue
    assert "catalogue #55" in text and "Invariant risk minimization" in text
    res = CliRunner().invoke(
        app, ["claims", "report", "--family", "grokking", "--store", str(store.root)]
    )
    assert res.exit_code == 0 and "grokking.delayed_generalization" in res.output
    assert "not run" in res.output or "not reproduced" in res.output
