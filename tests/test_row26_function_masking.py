"""Row 26 (Hammer's function masking, #26): the function-picking prompts, their masked, renamed
and swapped names, and the judge of ``comp.function_masking`` on hand-built tables."""

from __future__ import annotations

import pandas as pd
import pytest
import torch
from pydantic import ValidationError

from genlab.claims import CLAIMS
from genlab.errors import SpecError
from genlab.tasks.function_calls import FunctionCallParams, _vocab, function_calls

CLAIM = CLAIMS.get("comp.function_masking").obj
SMALL = {"n_train": 2000, "n_eval": 300}


def _names(x: torch.Tensor, p: FunctionCallParams) -> torch.Tensor:
    width = 1 + p.desc_len
    return x[:, : p.n_candidates * width : width]


def test_prompt_layout_and_keyword_shortcut():
    p = FunctionCallParams(**SMALL)
    d = function_calls(p, 0)
    v = _vocab(p)
    x, y = d.test["original"].x, d.test["original"].y
    assert x.shape == (300, 3 * 3 + 4) and d.info.n_outputs == 3 and d.info.vocab_size == v["size"]
    names = _names(x, p)
    keyword = x[:, -3]
    assert (names[torch.arange(len(y)), y] == keyword).all()  # the query echoes the target's name
    word = x[:, -2]
    desc = x[:, :9].view(-1, 3, 3)[:, :, 1:]
    assert (desc[torch.arange(len(y)), y] == word[:, None]).any(1).all()  # and one of its words


def test_renamed_and_swapped_keep_the_prompts():
    p = FunctionCallParams(**SMALL)
    d = function_calls(p, 1)
    orig, ren, swp = (d.test[s].x for s in ("original", "renamed", "swapped"))
    rest = [i for i in range(orig.shape[1]) if i not in (0, 3, 6)]
    assert torch.equal(orig[:, rest], ren[:, rest]) and torch.equal(orig[:, rest], swp[:, rest])
    assert (_names(ren, p) >= p.n_functions).all()  # random names only
    y = d.test["swapped"].y
    assert (_names(swp, p)[torch.arange(len(y)), y] != swp[:, -3]).all()  # keyword misleads
    assert torch.equal(_names(swp, p).sort(1).values, _names(orig, p).sort(1).values)


def test_masking_ratio_and_shared_tests():
    plain = function_calls(FunctionCallParams(**SMALL), 2)
    masked = function_calls(FunctionCallParams(mask=0.67, **SMALL), 2)
    p = FunctionCallParams(**SMALL)
    share = (_names(masked.train["main"].x, p) >= p.n_functions).all(1).float().mean().item()
    assert 0.6 < share < 0.74
    assert (_names(plain.train["main"].x, p) < p.n_functions).all()
    for s in ("original", "renamed", "swapped"):
        assert torch.equal(plain.test[s].x, masked.test[s].x)
    again = function_calls(FunctionCallParams(mask=0.67, **SMALL), 2)
    assert torch.equal(again.train["main"].x, masked.train["main"].x)


def test_no_keyword_drops_the_echo():
    d = function_calls(FunctionCallParams(keyword=False, **SMALL), 0)
    assert d.test["original"].x.shape[1] == 3 * 3 + 3


def test_bad_params_are_refused():
    with pytest.raises(ValidationError, match="n_candidates"):
        FunctionCallParams(n_functions=3, n_candidates=4)
    with pytest.raises(ValidationError, match="query_words"):
        FunctionCallParams(query_words=3)
    with pytest.raises(ValidationError):
        FunctionCallParams(mask=1.5)
    with pytest.raises(SpecError, match="claim"):
        CLAIM.config("full", {"mask": 0.0})


def table(masked_swapped: list[float], plain_swapped: float = 0.4, val: float = 0.97):
    rows = []
    for s, ms in enumerate(masked_swapped):
        rows.append(
            {
                "names": "plain",
                "seed": s,
                "data_seed": s,
                "val": 0.97,
                "original": 0.98,
                "renamed": 0.7,
                "swapped": plain_swapped,
            }
        )
        rows.append(
            {
                "names": "masked",
                "seed": s,
                "data_seed": s,
                "val": val,
                "original": 0.98,
                "renamed": 0.95,
                "swapped": ms,
            }
        )
    t = pd.DataFrame(rows)
    t["status"], t["run_id"] = "done", [f"r{i}" for i in range(len(t))]
    return t


def test_judge_reaches_both_decisions():
    cfg = CLAIM.config("full")
    assert CLAIM.evaluate(cfg, table([0.90, 0.88, 0.91, 0.89])).verdict == "reproduced"
    null = table([0.1, 0.12, 0.09, 0.11])  # masked: renamed 0.95, swapped ~0.1 -> mean ~0.52
    null.loc[null["names"] == "masked", "renamed"] = 0.7
    assert CLAIM.evaluate(cfg, null).verdict == "not reproduced"
    assert CLAIM.evaluate(cfg, table([0.90, 0.88, 0.91, 0.89], val=0.6)).verdict == "inconclusive"
    nodrop = table([0.97, 0.97, 0.97, 0.97], plain_swapped=0.97)
    nodrop.loc[:, "renamed"] = 0.97
    assert CLAIM.evaluate(cfg, nodrop).verdict == "not reproduced"  # plain does not drop


def test_arms_share_data_and_controls_train_their_own():
    def by(arms):
        return {(a.labels["names"], a.labels["seed"]): a.spec for a in arms}

    arms = by(CLAIM.arms(CLAIM.config("smoke")))
    assert arms[("plain", 0)].data_seed == arms[("masked", 0)].data_seed == 0
    pos = by(CLAIM.arms(CLAIM.config("smoke", control="positive")))
    assert pos[("plain", 1)].run_id == arms[("plain", 1)].run_id
    assert pos[("masked", 1)].run_id != arms[("masked", 1)].run_id
    neg = by(CLAIM.arms(CLAIM.config("smoke", control="negative")))
    assert not {s.run_id for s in neg.values()} & {s.run_id for s in arms.values()}
