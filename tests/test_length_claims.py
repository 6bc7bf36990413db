"""Length claims: smoke runs end to end with a figure; each has a not-reproduced setting."""

from __future__ import annotations

import pytest

from genlab.claims import CLAIMS
from genlab.claims.runner import run_claim
from genlab.errors import SpecError
from genlab.store import Store

TINY_NOPE = {"train_length": 3, "test_max": 6, "n_test_lengths": 2, "n_train": 50, "n_test": 20,
             "d_model": 16, "ops": ["copy"]}  # fmt: skip


def test_length_claims_are_registered() -> None:
    ids = {e.name for e in CLAIMS.entries() if e.family == "length"}
    assert {"length.chomsky", "length.nope", "length.addition_format", "length.rasp"} <= ids


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


@pytest.mark.parametrize(
    "claim_id, overrides, field",
    [
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
