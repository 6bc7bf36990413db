"""Task ``seq_parity`` and claim ``length.scratchpad`` (Anil et al., #46): targets, verdict rule on
hand-built results, and an untrained run that must come out not reproduced."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from genlab.claims import CLAIMS
from genlab.claims.runner import run_claim
from genlab.errors import SpecError
from genlab.losses import IGNORE
from genlab.probes.length import OUT_OF_RANGE
from genlab.spec import parse_spec
from genlab.store import Store
from genlab.tasks import TASKS
from genlab.tasks.seq_parity import BIT, EOS, EQ, example

CLAIM = CLAIMS.get("length.scratchpad").obj


def build(**params):  # noqa: ANN201
    entry = TASKS.get("seq_parity")
    return entry.obj(entry.params(**params), 0)


@pytest.mark.parametrize("fmt", ["direct", "scratchpad"])
def test_targets_are_next_tokens_and_the_answer_is_the_parity(fmt) -> None:
    data = build(format=fmt, train_length=6, test_max=9, n_train=50, n_val=0, n_test=20)
    for split in data.splits().values():
        for x, y in zip(split.x, split.y, strict=True):
            scored = (y != IGNORE).nonzero().flatten()
            n_bits = int(((x >= BIT) & (torch.arange(len(x)) < (x == 2).nonzero()[0, 0])).sum())
            assert torch.equal(y[scored[:-1]], x[scored[:-1] + 1])  # teacher forcing
            assert y[scored[-1]] == EOS
            answer = y[scored[-2]] - BIT
            assert answer == int((x[:n_bits] - BIT).sum()) % 2
            assert len(scored) == (2 if fmt == "direct" else 2 * n_bits + 3)


def test_scratchpad_writes_each_bit_then_the_running_parity() -> None:
    x, y = example([1, 1, 0], "scratchpad")
    steps = [BIT + 1, BIT + 1, BIT + 1, BIT + 0, BIT + 0, BIT + 0]
    assert x == [BIT + 1, BIT + 1, BIT + 0, 2, *steps, EQ, BIT + 0]
    assert y == [IGNORE] * 3 + steps + [EQ, BIT + 0, EOS]


@pytest.mark.parametrize(
    ("params", "field"),
    [({"train_length": 8, "test_min": 8}, "test_min"), ({"format": "chain"}, "format")],
)
def test_bad_params_are_spec_errors(params, field) -> None:
    with pytest.raises(SpecError, match=field):
        parse_spec({"task": {"name": "seq_parity", "params": params},
                    "model": {"name": "transformer"}, "steps": 10})  # fmt: skip


def frames(direct: float, pad: float, val: float = 1.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs and metrics as the store would hold them, with the given out-of-range accuracies."""
    cfg = CLAIM.config("smoke", {"seeds": 2})
    runs, rows = [], []
    for spec in CLAIM.specs(cfg):
        acc = direct if spec.task.params["format"] == "direct" else pad
        runs.append({"run_id": spec.run_id, "status": "done", "spec": spec.model_dump(mode="json")})
        for split, metric, value in ((OUT_OF_RANGE, "accuracy", acc),
                                     (OUT_OF_RANGE, "token_accuracy", acc),
                                     ("val/main", "accuracy", val)):  # fmt: skip
            rows.append({"run_id": spec.run_id, "step": cfg.steps, "split": split,
                         "metric": metric, "value": value})  # fmt: skip
    return pd.DataFrame(runs), pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("direct", "pad", "verdict"),
    [
        (0.5, 0.6, "reproduced"),
        (
            0.0,
            0.6,
            "reproduced",
        ),  # below chance counts as no skill (0), not as -1  # direct at chance (0.0 above it), scratchpad +0.6
        (0.5, 0.03, "not reproduced"),  # the scratchpad gains nothing
        (0.9, 1.0, "not reproduced"),  # direct already extrapolates (+0.8)
        (0.6, 0.35, "inconclusive"),  # direct +0.2, gain +0.15
    ],
)
def test_verdict_rule(direct, pad, verdict) -> None:
    cfg = CLAIM.config("smoke", {"seeds": 2})
    res = CLAIM.judge(cfg, *frames(direct, pad))
    assert res.verdict == verdict, res.evidence
    assert res.statistic["above_chance_direct"] == pytest.approx(max(0, 2 * direct - 1))


def test_a_format_that_does_not_fit_makes_it_inconclusive() -> None:
    cfg = CLAIM.config("smoke", {"seeds": 2})
    res = CLAIM.judge(cfg, *frames(0.5, 0.6, val=0.7))  # would be reproduced if it had fit
    assert res.verdict == "inconclusive" and "did not fit" in res.evidence


def test_untrained_is_inconclusive(tmp_path) -> None:
    res = run_claim(CLAIM, Store(tmp_path / "s"), "smoke", overrides={"steps": 1}, progress=False)
    assert res.verdict == "inconclusive" and "did not fit" in res.evidence
    assert res.figure is not None and res.figure.exists()


def test_learned_positions_fit_but_do_not_extrapolate_so_not_reproduced(tmp_path) -> None:
    """Absolute positions beyond the training lengths were never trained: both formats fit
    lengths <= 3 and fail beyond them, so the scratchpad gains nothing."""
    overrides = {"positional": "learned", "train_length": 3, "test_max": 6, "steps": 300,
                 "lr": 3e-3}  # fmt: skip
    res = run_claim(CLAIM, Store(tmp_path / "s"), "smoke", overrides=overrides, progress=False)
    assert res.verdict == "not reproduced", res.evidence
    assert (
        min(res.statistic["val_accuracy_direct"], res.statistic["val_accuracy_scratchpad"]) >= 0.9
    )
