"""Length claims: smoke runs end to end with a figure; each has a not-reproduced setting."""

from __future__ import annotations

import pandas as pd
import pytest

from genlab.claims import CLAIMS
from genlab.claims.length import judged_expectation, paper_solved
from genlab.claims.runner import run_claim
from genlab.errors import SpecError
from genlab.store import Store

TINY_CHOMSKY = {
    "tasks": ["parity_check"],
    "archs": ["lstm", "rnn"],
    "train_length": 4,
    "test_max": 8,
    "n_test_lengths": 2,
    "n_train": 100,
    "n_test": 20,
    "hidden": 8,
}
TINY_NOPE = {"train_length": 3, "test_max": 6, "n_test_lengths": 2, "n_train": 50, "n_test": 20,
             "d_model": 16, "ops": ["copy"]}  # fmt: skip


def test_length_claims_are_registered() -> None:
    ids = {e.name for e in CLAIMS.entries() if e.family == "length"}
    assert {"length.chomsky", "length.nope", "length.addition_format", "length.rasp"} <= ids


def test_chomsky_smoke_runs_and_draws(tmp_path) -> None:
    store = Store(tmp_path / "s")
    res = run_claim(CLAIMS.get("length.chomsky").obj, store, "smoke", progress=False)
    assert res.verdict in ("reproduced", "not reproduced", "inconclusive")
    assert res.figure is not None and res.figure.exists()
    assert set(res.table["arch"]) == {"lstm", "stack_rnn"}
    assert "length.chomsky" in set(store.verdicts()["claim_id"])


def test_chomsky_untrained_is_not_reproduced(tmp_path) -> None:
    """One step of training solves nothing, so the expected successes fail."""
    res = run_claim(CLAIMS.get("length.chomsky").obj, Store(tmp_path / "s"), "smoke",
                    {**TINY_CHOMSKY, "steps": 1}, progress=False)  # fmt: skip
    assert res.verdict == "not reproduced"
    assert res.statistic["expected_successes_held"] == 0.0


def test_nope_untrained_is_not_reproduced(tmp_path) -> None:
    res = run_claim(CLAIMS.get("length.nope").obj, Store(tmp_path / "s"), "smoke",
                    {**TINY_NOPE, "steps": 1}, progress=False)  # fmt: skip
    assert res.verdict == "not reproduced"
    assert res.figure is not None and res.figure.exists()


def test_addition_untrained_is_not_reproduced(tmp_path) -> None:
    tiny = {"train_length": 2, "test_max": 4, "n_test_lengths": 1, "n_train": 30, "n_test": 10,
            "d_model": 16, "steps": 1}  # fmt: skip
    res = run_claim(CLAIMS.get("length.addition_format").obj, Store(tmp_path / "s"), "smoke",
                    tiny, progress=False)  # fmt: skip
    assert res.verdict == "not reproduced"
    assert "ood_accuracy_index_hints_std" in res.statistic


def test_rasp_untrained_is_not_reproduced(tmp_path) -> None:
    tiny = {"train_length": 3, "test_max": 5, "n_test_lengths": 1, "n_train": 30, "n_test": 10,
            "d_model": 16, "steps": 1}  # fmt: skip
    res = run_claim(CLAIMS.get("length.rasp").obj, Store(tmp_path / "s"), "smoke", tiny,
                    progress=False)  # fmt: skip
    assert res.verdict == "not reproduced"
    assert res.figure is not None and res.figure.exists()


def test_chomsky_judge_counts_cells() -> None:
    claim = CLAIMS.get("length.chomsky").obj
    cfg = claim.config("smoke", {"tasks": ["parity_check", "duplicate_string"],
                                 "archs": ["lstm", "tape_rnn"]})  # fmt: skip
    specs = claim.specs(cfg)
    acc = {("parity_check", "lstm"): 1.0, ("parity_check", "tape_rnn"): 0.5,
           ("duplicate_string", "lstm"): 0.1, ("duplicate_string", "tape_rnn"): 0.95}  # fmt: skip
    runs, rows = [], []
    for s in specs:
        key = (s.task.params["task"], s.model.name)
        runs.append({"run_id": s.run_id, "status": "done", "spec": s.model_dump(mode="json")})
        for metric in ("accuracy", "token_accuracy"):
            rows.append({"run_id": s.run_id, "step": 5, "split": "test/out_of_range",
                         "metric": metric, "value": acc[key]})  # fmt: skip
    res = claim.judge(cfg, pd.DataFrame(runs), pd.DataFrame(rows))
    assert res.verdict == "reproduced"  # lstm solves parity; only the tape solves duplicate
    acc[("duplicate_string", "lstm")] = 0.99  # now a non-tape model solves duplicate string
    acc[("duplicate_string", "tape_rnn")] = 0.2
    rows = [{**r, "value": acc[next((s.task.params["task"], s.model.name) for s in specs
                                    if s.run_id == r["run_id"])]} for r in rows]  # fmt: skip
    res = claim.judge(cfg, pd.DataFrame(runs), pd.DataFrame(rows))
    assert res.verdict == "not reproduced"


def test_paper_pattern_by_level() -> None:
    assert paper_solved("parity_check", "lstm") and not paper_solved("parity_check", "transformer")
    assert paper_solved("reverse_string", "stack_rnn") and not paper_solved("reverse_string", "rnn")
    assert paper_solved("duplicate_string", "tape_rnn")
    assert not paper_solved("duplicate_string", "stack_rnn")
    assert judged_expectation("duplicate_string", "lstm") is False
    assert judged_expectation("parity_check", "rnn") is None


@pytest.mark.parametrize(
    "claim_id, overrides, field",
    [
        ("length.chomsky", {"train_length": 10, "test_max": 10}, "test_max"),
        ("length.chomsky", {"archs": ["gru"]}, "archs"),
        ("length.nope", {"train_length": 8, "test_max": 8}, "test_max"),
        ("length.nope", {"positionals": ["learned", "rope"]}, "positionals"),
        ("length.addition_format", {"train_length": 5, "test_max": 4}, "test_max"),
        ("length.addition_format", {"formats": ["plain", "reversed"]}, "formats"),
        ("length.rasp", {"tasks": ["sort", "copy_unique"]}, "tasks"),
        ("length.rasp", {"train_length": 8, "test_max": 8}, "test_max"),
    ],
)
def test_bad_claim_config(claim_id: str, overrides: dict, field: str) -> None:
    with pytest.raises(SpecError, match=field):
        CLAIMS.get(claim_id).obj.config("smoke", overrides)


def test_cli_bad_alphabet_exits_2_and_writes_nothing(tmp_path) -> None:
    from typer.testing import CliRunner

    from genlab.cli import app

    store = tmp_path / "s"
    result = CliRunner().invoke(
        app, ["run", "chomsky-parity", "task.alphabet_size=1", "--store", str(store), "-q"]
    )
    assert result.exit_code == 2, result.output
    assert "alphabet_size" in result.output
    assert not (store / "runs").exists() or not any((store / "runs").iterdir())
