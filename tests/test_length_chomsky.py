"""``length.chomsky`` (Delétang et al., #62) judged on hand-built results, one test per verdict,
and its Table-2 text; its controls are trained for real in ``test_claims_controls.py``."""

from __future__ import annotations

import pandas as pd
import pytest

from genlab.claims import CLAIMS
from genlab.errors import SpecError

CLAIM = CLAIMS.get("length.chomsky").obj
FULL = CLAIM.config("full")


def table(scores: dict[tuple[str, str], float], fit: float = 0.99, cfg=FULL) -> pd.DataFrame:
    """Per run of ``cfg``'s design: the cell's score on the best run, 0.5 on the others (the
    paper's max over seeds x lrs must pick the best one)."""
    rows = []
    for arm in CLAIM.arms(cfg):
        lab = arm.labels
        best = lab["seed"] == 0 and lab["lr"] == cfg.lrs[-1]
        score = scores[(lab["task"], lab["arch"])] if best else 0.5
        rows.append(
            {
                **lab,
                "run_id": arm.spec.run_id,
                "status": "done",
                "score": score,
                "exact": score**20,
                "fit": fit,
            }
        )
    return pd.DataFrame(rows)


def paper(cfg=FULL, solved: float = 1.0, failed: float = 0.6) -> dict[tuple[str, str], float]:
    """Every cell as the level rule says: solved or near chance."""
    level = {
        "parity_check": "R",
        "reverse_string": "DCF",
        "missing_duplicate": "CS",
        "stack_manipulation": "DCF",
    }
    return {
        (t, a): solved if a in cfg.solvers[level[t]] else failed
        for t in cfg.tasks
        for a in cfg.archs
    }


def test_the_paper_pattern_is_reproduced_scored_by_the_best_run():
    res = CLAIM.evaluate(FULL, table(paper()))
    assert res.verdict == "reproduced", res.evidence
    assert res.statistic["expected_successes_held"] == 1.0
    assert res.statistic["cells"] == len(FULL.tasks) * len(FULL.archs)
    # one run of each expected success solves it (the others score 0.5): the evidence says so
    assert res.statistic["expected_successes_runs_solving"] == 1 / (FULL.seeds * len(FULL.lrs))
    assert "solved by 1.0 of 6 runs" in res.evidence


def test_memory_models_that_do_not_extrapolate_refute_it():
    scores = paper()
    for cell in [
        ("reverse_string", "stack_rnn"),
        ("reverse_string", "tape_rnn"),
        ("missing_duplicate", "tape_rnn"),
        ("parity_check", "stack_rnn"),
    ]:
        scores[cell] = 0.62
    res = CLAIM.evaluate(FULL, table(scores))
    assert res.verdict == "not reproduced", res.evidence
    assert res.statistic["expected_successes_held"] < 0.5


def test_an_arm_that_did_not_fit_or_a_mixed_pattern_is_inconclusive():
    t = table(paper())
    t.loc[(t["task"] == "missing_duplicate") & (t["arch"] == "rnn"), "fit"] = 0.6
    res = CLAIM.evaluate(FULL, t)
    assert res.verdict == "inconclusive" and "did not fit" in res.evidence
    scores = paper()
    scores[("reverse_string", "lstm")] = scores[("missing_duplicate", "stack_rnn")] = 0.95
    res = CLAIM.evaluate(FULL, table(scores))  # 6/8 expected failures: between 50% and 80%
    assert res.verdict == "inconclusive", res.evidence


def test_every_arm_at_chance_is_inconclusive():
    res = CLAIM.evaluate(FULL, table({k: 0.5 for k in paper()}))
    assert res.verdict == "inconclusive" and "floor" in res.evidence


def test_text_is_table_2_layout():
    res = CLAIM.evaluate(FULL, table(paper()))
    lines = CLAIM.text(res).splitlines()
    assert lines[0].split() == [
        "Level",
        "Task",
        "RNN",
        "Stack-RNN",
        "Tape-RNN",
        "Transformer",
        "LSTM",
    ]
    assert lines[1].startswith("R     Parity Check") and lines[1].count("100.0 (100)*") == 4
    assert lines[3].startswith("CS    Missing Duplicate") and lines[3].count("*") == 1
    assert "!" not in "".join(lines[1:4])
    scores = paper()
    scores[("missing_duplicate", "lstm")] = 0.97
    lines = CLAIM.text(CLAIM.evaluate(FULL, table(scores))).splitlines()
    assert "97.0" in lines[3] and "*!" in lines[3]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"train_length": 10, "test_max": 10}, "test_max"),
        ({"archs": ["gru"]}, "archs"),
        ({"tasks": ["even_pairs"]}, "tasks"),
        ({"lrs": [-1.0]}, "lrs"),
    ],
)
def test_bad_config_names_the_field(overrides, field):
    with pytest.raises(SpecError, match=field):
        CLAIM.config("smoke", overrides)
