"""Judge tests of the continual claims on hand-built tables, one per verdict (the controls run
for real in test_claims_controls.py)."""

from __future__ import annotations

import pandas as pd

from genlab.claims import CLAIMS

ZOO = CLAIMS.get("cl.model_zoo").obj


def zoo_table(zoo: list[float], replay: list[float], learned: float = 0.9) -> pd.DataFrame:
    rows = []
    for lr, shift in ((1e-3, -0.05), (3e-3, 0.0)):
        for s in range(len(zoo)):
            for m, acc in (
                ("finetune", 0.5),
                ("ewc", 0.52),
                ("replay", replay[s]),
                ("model_zoo", zoo[s]),
            ):
                rows.append(
                    {
                        "method": m,
                        "lr": lr,
                        "seed": s,
                        "data_seed": s,
                        "run_id": f"{m}{lr}{s}",
                        "status": "done",
                        "avg_accuracy": acc + shift,
                        "forgetting": 0.1,
                        "learned": learned if m == "model_zoo" else 0.9,
                    }
                )
    return pd.DataFrame(rows)


def judge(table):
    return ZOO.evaluate(ZOO.config("full"), table)


def test_model_zoo_reproduced_when_it_beats_the_best_baseline_at_every_seed():
    r = judge(zoo_table([0.90, 0.89, 0.91, 0.90, 0.92], [0.84, 0.85, 0.84, 0.86, 0.85]))
    assert r.verdict == "reproduced", r.evidence
    assert r.statistic["diff"] > 0.04 and r.statistic["lr_model_zoo"] == 3e-3


def test_model_zoo_not_reproduced_when_replay_is_better():
    r = judge(zoo_table([0.80, 0.79, 0.81, 0.80, 0.78], [0.84, 0.85, 0.84, 0.86, 0.85]))
    assert r.verdict == "not reproduced", r.evidence


def test_model_zoo_inconclusive_when_the_ci_straddles_or_an_arm_did_not_fit():
    r = judge(zoo_table([0.90, 0.80, 0.92, 0.82, 0.88], [0.85, 0.85, 0.84, 0.86, 0.85]))
    assert r.verdict == "inconclusive" and r.statistic["diff_lo"] < 0 < r.statistic["diff_hi"]
    r = judge(zoo_table([0.90, 0.89, 0.91, 0.90, 0.92], [0.84, 0.85, 0.84, 0.86, 0.85], 0.6))
    assert r.verdict == "inconclusive" and "did not fit" in r.evidence, r.evidence


def test_model_zoo_inconclusive_when_every_arm_is_at_chance():
    t = zoo_table([0.12] * 5, [0.11] * 5)
    t["avg_accuracy"] = 0.1
    assert judge(t).verdict == "inconclusive"


FAST = CLAIMS.get("cl.fast_slow").obj


def fast_table(avg: list[float], incoming: list[float], learned: float = 0.85) -> pd.DataFrame:
    """fast_slow's per-seed average and incoming accuracies; every baseline at 0.45 and 0.80."""
    rows = []
    for m, lams in (
        ("finetune", (0.0,)),
        ("joint", (0.0,)),
        ("ewc", (100.0, 1000.0)),
        ("fast_slow", (100.0, 1000.0)),
    ):
        for lam in lams:
            for s in range(len(avg)):
                a, n = (avg[s], incoming[s]) if m == "fast_slow" else (0.45, 0.80)
                rows.append(
                    {
                        "method": m,
                        "lam": lam,
                        "lr": 1e-3,
                        "seed": s,
                        "data_seed": s,
                        "run_id": f"{m}{lam}{s}",
                        "status": "done",
                        "avg_accuracy": a - (lam == 100.0) * 0.01,
                        "forgetting": 0.1,
                        "incoming": n,
                        "learned": learned if m == "ewc" else 0.85,
                    }
                )
    return pd.DataFrame(rows)


def fast_judge(table):
    return FAST.evaluate(FAST.config("full"), table)


def test_fast_slow_reproduced_only_when_it_wins_on_both_measures():
    r = fast_judge(fast_table([0.50, 0.51, 0.49, 0.50, 0.52], [0.85, 0.84, 0.86, 0.85, 0.85]))
    assert r.verdict == "reproduced", r.evidence
    assert r.statistic["lam_fast_slow"] == 1000.0  # the best setting, chosen on average accuracy
    r = fast_judge(fast_table([0.50, 0.51, 0.49, 0.50, 0.52], [0.80, 0.79, 0.81, 0.80, 0.80]))
    assert r.verdict == "not reproduced", r.evidence  # no few-shot gain on incoming experiences


def test_fast_slow_inconclusive_when_the_ci_straddles_or_an_arm_did_not_fit():
    r = fast_judge(fast_table([0.55, 0.42, 0.53, 0.41, 0.52], [0.85, 0.84, 0.86, 0.85, 0.85]))
    assert r.verdict == "inconclusive", r.evidence
    t = fast_table([0.50, 0.51, 0.49, 0.50, 0.52], [0.85, 0.84, 0.86, 0.85, 0.85], learned=0.6)
    r = fast_judge(t)
    assert r.verdict == "inconclusive" and "did not fit" in r.evidence, r.evidence
