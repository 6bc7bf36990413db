"""The command line: exit codes, nothing written on bad input, --json documents, export, plot."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from genlab.cli import app

from .conftest import TINY

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "nope"], "no preset or file 'nope'"),
        (["run", "grokking", "task.q=1"], "task.params.q: unknown field"),
        (["run", "grokking", 'task.name="nope"'], "unknown task 'nope'"),
        (["run", "grokking", 'model.name="nope"'], "unknown model 'nope'"),
        (["run", "grokking", "task.p=22", 'task.operation="div"'], "p must be prime"),
        (["run", "grokking", "task.train_fraction=0"], "train_fraction"),
        (["run", "grokking", "optimizer.lr=0"], "optimizer.lr"),
        (["run", "grokking", "steps=-5"], "steps"),
        (["run", "grokking", "steps=abc"], "steps: Input should be a valid integer"),
        (["claims", "run", "no.such.claim"], "unknown claim 'no.such.claim'"),
        (["claims", "run", "grokking.delayed_generalization", "--set", "seeds=1"], "claim.seeds"),
        (["claims", "run", "grokking.delayed_generalization", "--budget", "huge"], "budget"),
        (["claims", "run", "grokking.linear", "-e", "fast"], "executor must be one of"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(tmp_path, args, message):
    store = tmp_path / "store"
    result = invoke(*args, "--store", str(store))
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert not store.exists()


def test_bad_store_is_a_clear_error(tmp_path):
    (tmp_path / "genlab.db").write_text("garbage" * 50)
    result = invoke("runs", "--store", str(tmp_path))
    assert result.exit_code == 2 and "not a genlab store" in result.output


def test_run_then_inspect(tmp_path):
    store = str(tmp_path / "store")
    result = invoke("run", "grokking", *TINY, "--store", store, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    run_id = doc["run_id"]
    assert doc["status"] == "done" and doc["plot"].endswith("curves.png")
    assert 0.0 <= doc["final"]["test/heldout:accuracy"] <= 1.0

    runs = json.loads(invoke("runs", "--store", store, "--json").stdout)
    assert [r["run_id"] for r in runs] == [run_id]
    shown = json.loads(invoke("show", run_id[:6], "--store", store, "--json").stdout)
    assert shown["status"] == "done" and shown["spec"]["task"]["params"]["p"] == 11
    assert "curves" in shown["artifacts"]

    csv = invoke("export", run_id, "--csv", "--store", store).stdout
    assert csv.splitlines()[0] == "run_id,step,split,metric,value"
    assert any(",test/heldout,accuracy," in line for line in csv.splitlines())

    out = tmp_path / "again.png"
    assert invoke("plot", run_id, "--store", store, "--out", str(out)).exit_code == 0
    assert out.stat().st_size > 1000

    again = invoke("run", "grokking", *TINY, "--store", store)
    assert again.exit_code == 0 and "already done" in again.output


@pytest.mark.parametrize("kind", ["tasks", "models", "methods", "probes", "claims", "presets"])
def test_list_json(kind):
    result = invoke("list", kind, "--json")
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    assert rows and all(r["name"] and "doc" in r for r in rows)


def test_list_rejects_unknown_kind():
    assert invoke("list", "gizmos").exit_code == 2


def test_claims_list_and_papers_json():
    claims = json.loads(invoke("claims", "list", "--json").stdout)
    assert any(c["id"] == "grokking.delayed_generalization" for c in claims)
    papers = json.loads(invoke("papers", "--json").stdout)
    assert len(papers) == 120
    p55 = next(p for p in papers if p["number"] == 55)
    assert "task:modular_arithmetic" in p55["components"]
    assert "grokking.delayed_generalization" in p55["claims"]


def test_a_control_that_does_not_come_out_is_shown_as_open(monkeypatch):
    from dataclasses import replace

    from genlab.claims import CLAIMS

    claim = CLAIMS.get("grokking.delayed_generalization").obj
    measured = replace(claim.controls["negative"], open="measured: inconclusive (a test note)")
    monkeypatch.setitem(claim.controls, "negative", measured)
    (doc,) = [
        c for c in json.loads(invoke("claims", "list", "--json").stdout) if c["id"] == claim.id
    ]
    assert doc["controls"]["negative"]["open"] == measured.open
    assert all("open" not in c for n, c in doc["controls"].items() if n != "negative")
    shown = invoke("claims", "show", claim.id)
    assert shown.exit_code == 0 and "inconclusive (a test note)" in " ".join(shown.stdout.split())


def test_claims_run_with_the_pool_executor(tmp_path):
    """The pool executor trains the claim's runs in worker processes to the serial verdict."""
    store = str(tmp_path / "store")
    args = [
        "claims",
        "run",
        "grokking.linear",
        "--set",
        "d_ins=[100]",
        "--set",
        "seeds=2",
        "--set",
        "weight_decays=[0.0]",
        "--json",
        "--no-controls",
    ]
    result = invoke(*args, "-e", "pool", "--store", store)
    assert result.exit_code == 0, result.output
    (doc,) = json.loads(result.output)
    (serial,) = json.loads(invoke(*args, "--store", str(tmp_path / "serial")).output)
    same = [json.dumps([d["verdict"], d["statistic"]], sort_keys=True) for d in (doc, serial)]
    assert same[0] == same[1]  # as JSON text: a NaN statistic equals itself
    runs = json.loads(invoke("runs", "--store", store, "--json").output)
    assert {r["status"] for r in runs} == {"done"} and len(runs) == len(doc["run_ids"]) == 2


def test_claims_run_measures_the_controls_that_license_the_verdict(tmp_path):
    from genlab.claims import CLAIMS
    from genlab.store import Store

    claim = CLAIMS.get("grokking.linear").obj
    store = tmp_path / "store"
    result = invoke("claims", "run", claim.id, "--json", "-q", "--store", str(store))
    assert result.exit_code == 0, result.output
    (doc,) = json.loads(result.stdout)
    smoke = claim.applicable_controls("smoke")
    assert set(doc["controls"]) == set(smoke) and doc["scope"] == claim.scope
    measured = Store(store).control_verdicts(claim.id)
    assert set(measured["control"]) == set(smoke)
    assert doc["controls"] == dict(zip(measured["control"], measured["verdict"], strict=True))
    again = invoke(
        "claims",
        "run",
        claim.id,
        "--json",
        "-q",
        "--no-controls",
        "--store",
        str(tmp_path / "bare"),
    )
    (bare,) = json.loads(again.stdout)
    if bare["decision"] != "inconclusive":
        assert bare["verdict"] == "inconclusive" and "controls not run" in bare["evidence"]


def test_claims_audit_prints_the_interface_the_checks_read():
    result = invoke("claims", "audit", "grokking.linear", "--json")
    (doc,) = json.loads(result.stdout)
    assert {"id", "scope", "design_hash", "frozen", "reachable", "controls"} <= set(doc)
    assert set(doc["reachable"]) == {"smoke", "full"}
    for c in doc["controls"].values():
        assert {"expect", "own_runs", "same_as_claim", "sensitive", "measured"} <= set(c)
    assert result.exit_code == (1 if doc["problems"] else 0)


def test_claims_freeze_needs_a_claim_and_a_reason_for_a_change():
    result = invoke("claims", "freeze")
    assert result.exit_code == 2 and "name a claim id" in result.output


def test_claims_show_names_a_paper_outside_the_catalogue():
    """A benchmark reference (``Ref(None, ...)``) is shown as not in the catalogue, with authors and
    title; a catalogue row keeps its number."""
    shown = invoke("claims", "show", "dg.colored_collapse")
    text = " ".join(shown.stdout.split())
    assert shown.exit_code == 0 and "#None" not in text
    assert "paper not in the catalogue: Gulrajani & Lopez-Paz 2021, \u201cIn search" in text
    assert "paper #8 Chen, Zhang" in " ".join(
        invoke("claims", "show", "dg.rationale_invariance").stdout.split()
    )
