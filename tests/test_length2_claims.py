"""Claims length.task_hinting (#92) and length.abstract_symbols (#96): smoke runs, figures,
and settings where each must come out not reproduced."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from genlab.claims import CLAIMS
from genlab.claims.runner import run_claim
from genlab.errors import SpecError
from genlab.store import Store


def claim(cid: str):  # noqa: ANN201
    return CLAIMS.get(cid).obj


def test_registered_in_length_family() -> None:
    ids = {e.name for e in CLAIMS.entries() if e.family == "length"}
    assert {"length.task_hinting", "length.abstract_symbols"} <= ids
    assert claim("length.task_hinting").papers == (92,)
    assert claim("length.abstract_symbols").papers == (96,)


def test_task_hinting_smoke_runs_with_figure(tmp_path) -> None:  # noqa: ANN001
    res = run_claim(claim("length.task_hinting"), Store(tmp_path / "s"), "smoke", progress=False)
    assert res.verdict in ("reproduced", "not reproduced", "inconclusive")
    assert {"ood_accuracy_hint", "ood_accuracy_alone", "gap"} <= set(res.statistic)
    assert res.figure is not None and res.figure.exists()
    assert len(res.run_ids) == 2


def test_task_hinting_untrained_is_not_reproduced(tmp_path) -> None:  # noqa: ANN001
    """One step of training: neither arm sorts long inputs, so the hint adds nothing."""
    res = run_claim(claim("length.task_hinting"), Store(tmp_path / "s"), "smoke",
                    overrides={"steps": 1}, progress=False)  # fmt: skip
    assert res.verdict == "not reproduced"
    assert res.statistic["gap"] <= 0.05


def test_abstract_symbols_smoke_runs_with_figure(tmp_path) -> None:  # noqa: ANN001
    res = run_claim(claim("length.abstract_symbols"), Store(tmp_path / "s"), "smoke",
                    progress=False)  # fmt: skip
    assert res.verdict in ("reproduced", "not reproduced", "inconclusive")
    assert "n_needed_modified" in res.statistic
    assert res.figure is not None and res.figure.exists()
    assert set(res.table["n_train"]) == {32, 128}


def test_abstract_symbols_without_the_terms_is_not_reproduced(tmp_path) -> None:  # noqa: ANN001
    """With both identity terms off the 'modified' arm is the vanilla transformer: same data
    needed (or never enough), so the claim must fail."""
    res = run_claim(
        claim("length.abstract_symbols"),
        Store(tmp_path / "s"),
        "smoke",
        overrides={"modified_qk": False, "modified_vo": False},
        progress=False,
    )
    assert res.verdict == "not reproduced"
    t = res.table.sort_values(["n_train", "seed", "modified"])
    van = t[~t["modified"]]["accuracy"].to_numpy()
    mod = t[t["modified"]]["accuracy"].to_numpy()
    assert abs(van - mod).max() < 0.02  # the same network up to float rounding


def test_needed_and_verdict_rule() -> None:
    c = claim("length.abstract_symbols")
    assert c.needed(pd.Series({64: 0.5, 256: 0.91, 1024: 0.95})) == 256
    assert math.isinf(c.needed(pd.Series({64: 0.5, 256: 0.89})))


@pytest.mark.parametrize(
    ("cid", "bad", "field"),
    [
        ("length.task_hinting", {"test_max": 4, "train_length": 8}, "test_max"),
        ("length.task_hinting", {"alphabet_size": 10, "test_max": 20}, "alphabet_size"),
        ("length.abstract_symbols", {"sizes": [256, 64]}, "sizes"),
        ("length.abstract_symbols", {"sizes": [64]}, "sizes"),
    ],
)
def test_bad_config_is_a_spec_error(cid: str, bad: dict, field: str) -> None:
    with pytest.raises(SpecError, match=field):
        claim(cid).config("smoke", bad)
