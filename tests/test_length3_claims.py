"""``length.turing_programs``: the judge on hand-built frames, a real must-fail run, bad input."""

from __future__ import annotations

import pandas as pd
import pytest

from genlab.claims import CLAIMS
from genlab.claims.runner import run_claim
from genlab.errors import SpecError
from genlab.store import Store

CLAIM = CLAIMS.get("length.turing_programs").obj


def frames(turing: list[float], direct: list[float]) -> tuple[object, pd.DataFrame, pd.DataFrame]:
    """Runs and metrics as the store would give them: one final out-of-range accuracy per run."""
    cfg = CLAIM.Config(seeds=len(turing))
    specs = CLAIM.specs(cfg)
    runs = pd.DataFrame(
        [{"run_id": s.run_id, "status": "done", "spec": s.model_dump(mode="json")} for s in specs]
    )
    rows = []
    for s, acc in zip(specs, turing + direct, strict=True):
        for split, metric, v in [("test/out_of_range", "accuracy", acc),
                                 ("test/out_of_range", "token_accuracy", min(1.0, acc + 0.3)),
                                 ("test/len_006", "accuracy", acc)]:  # fmt: skip
            rows.append({"run_id": s.run_id, "step": cfg.steps, "split": split, "metric": metric,
                         "value": v})  # fmt: skip
    return cfg, runs, pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("turing", "direct", "verdict"),
    [
        ([0.9, 0.7], [0.1, 0.0], "reproduced"),  # 0.8 vs 0.05
        ([0.3, 0.3], [0.3, 0.28], "not reproduced"),  # gap 0.01
        ([0.0, 0.0], [0.0, 0.0], "not reproduced"),  # nothing extrapolates
        ([0.4, 0.4], [0.0, 0.0], "inconclusive"),  # big gap but turing < 0.5
        ([0.9, 0.9], [0.8, 0.8], "inconclusive"),  # turing good, gap only 0.1
        ([0.2, 0.2], [0.9, 0.9], "not reproduced"),  # direct better
    ],
)
def test_judge_on_hand_built_frames(turing, direct, verdict) -> None:
    cfg, runs, metrics = frames(turing, direct)
    res = CLAIM.judge(cfg, runs, metrics)
    assert res.verdict == verdict
    assert res.statistic["gap"] == pytest.approx(sum(turing) / 2 - sum(direct) / 2)
    assert set(res.table["format"]) == {"turing", "reversed"}


def test_judge_with_missing_runs_is_inconclusive() -> None:
    cfg, runs, metrics = frames([0.9, 0.9], [0.0, 0.0])
    turing_ids = set(runs["run_id"][:2])
    only_turing = metrics[metrics["run_id"].isin(turing_ids)]
    assert CLAIM.judge(cfg, runs, only_turing).verdict == "inconclusive"
    assert CLAIM.judge(cfg, runs, metrics.iloc[:0]).verdict == "inconclusive"


def test_untrained_is_not_reproduced_with_a_figure(tmp_path) -> None:
    """One training step solves neither format: the gap is 0, so it must come out not reproduced."""
    tiny = {"train_length": 2, "test_max": 3, "n_test_lengths": 1, "n_train": 20, "n_test": 8,
            "d_model": 16, "steps": 1, "seeds": 1}  # fmt: skip
    store = Store(tmp_path / "s")
    res = run_claim(CLAIM, store, "smoke", tiny, progress=False)
    assert res.verdict == "not reproduced"
    assert res.statistic["ood_accuracy_turing"] == 0.0
    assert res.figure is not None and res.figure.exists()
    assert "length.turing_programs" in set(store.verdicts()["claim_id"])


def test_bad_config_is_a_spec_error(tmp_path) -> None:
    with pytest.raises(SpecError, match="test_max"):
        run_claim(CLAIM, Store(tmp_path / "s"), "smoke", {"train_length": 5, "test_max": 5},
                  progress=False)  # fmt: skip
    with pytest.raises(SpecError, match="direct"):
        run_claim(CLAIM, Store(tmp_path / "s"), "smoke", {"direct": "turing"}, progress=False)
    assert not (tmp_path / "s" / "runs").exists() or not any((tmp_path / "s" / "runs").iterdir())
