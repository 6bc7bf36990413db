"""Tasks of #92 (sorting with hint tasks) and #96 (templates on unseen symbols)."""

from __future__ import annotations

import pytest
import torch
from pydantic import ValidationError

from genlab.errors import SpecError
from genlab.losses import IGNORE
from genlab.spec import load_run_spec
from genlab.tasks.seq_hint import (
    EOS,
    FIRST,
    HINT,
    SEP,
    SORT,
    SeqSortHintParams,
    hint_example,
    seq_sort_hint,
    sort_example,
)
from genlab.tasks.seq_templates import SeqTemplatesParams, seq_templates

SMALL = {
    "alphabet_size": 20,
    "train_length": 4,
    "test_max": 8,
    "n_test_lengths": 2,
    "n_train": 30,
    "n_val": 5,
    "n_test": 10,
}


def test_sort_example_scores_answer_and_end() -> None:
    x, y = sort_example([3, 1, 2])
    assert x == [SORT, FIRST + 3, FIRST + 1, FIRST + 2, SEP, FIRST + 1, FIRST + 2, FIRST + 3]
    assert y == [IGNORE] * 4 + [FIRST + 1, FIRST + 2, FIRST + 3, EOS]


def test_successor_hint_scores_only_successors() -> None:
    x, y = hint_example([3, 1, 2], "successor")
    assert x[:5] == [HINT, FIRST + 3, FIRST + 1, FIRST + 2, SEP]
    # answer: 3 -> end, 1 -> 2, 2 -> 3 ; targets are next tokens at successor slots only
    assert x[5:] == [FIRST + 3, EOS, FIRST + 1, FIRST + 2, FIRST + 2, FIRST + 3]
    scored = [(i, t) for i, t in enumerate(y) if t != IGNORE]
    assert scored == [(5, EOS), (7, FIRST + 2), (9, FIRST + 3)]
    assert len(x) == len(y)


def test_count_smaller_hint() -> None:
    x, y = hint_example([3, 1, 2], "count_smaller")
    assert x[5:] == [FIRST + 2, FIRST + 0, FIRST + 1]
    assert y[4:] == [FIRST + 2, FIRST + 0, FIRST + 1, EOS]


def test_hint_adds_rows_and_keeps_sorting_and_test_data() -> None:
    on = seq_sort_hint(SeqSortHintParams(hint=True, **SMALL), 3)
    off = seq_sort_hint(SeqSortHintParams(hint=False, **SMALL), 3)
    assert len(on.train["main"]) == 2 * len(off.train["main"]) == 60
    first = on.train["main"].x[:30, : off.train["main"].x.shape[1]]
    assert torch.equal(first, off.train["main"].x)  # same sorting examples in both arms
    assert (on.train["main"].x[:, 0] == HINT).sum() == 30
    assert set(on.test) == {"len_005", "len_008"}
    for name in on.test:
        assert torch.equal(on.test[name].x, off.test[name].x)
        assert (on.test[name].x[:, 0] == SORT).all()
    assert on.info.extra["max_length"] >= on.test["len_008"].x.shape[1]


def test_hint_bad_input() -> None:
    with pytest.raises(ValidationError, match="above train_length"):
        SeqSortHintParams(**{**SMALL, "test_min": 4})
    with pytest.raises(ValidationError, match="alphabet_size"):
        SeqSortHintParams(**{**SMALL, "alphabet_size": 6})
    with pytest.raises(SpecError, match="test_max"):
        load_run_spec("length-hint-sort", ["task.params.test_max=4"])


def test_templates_unseen_symbols_are_disjoint_and_labels_follow_templates() -> None:
    p = SeqTemplatesParams(
        templates=["aa", "ab"],
        n_symbols_train=10,
        n_symbols_test=15,
        n_train=200,
        n_val=20,
        n_test=200,
    )
    d = seq_templates(p, 0)
    tr, te = d.train["main"], d.test["unseen_symbols"]
    assert tr.x.max() < 10 and te.x.min() >= 10 and te.x.max() < 25
    for s in (tr, te):
        same = s.x[:, 0] == s.x[:, 1]
        assert torch.equal(same, s.y == 0)
    assert d.info.kind == "classification" and d.info.vocab_size == 25
    assert 0.3 < tr.y.float().mean() < 0.7


def test_templates_longer_patterns() -> None:
    d = seq_templates(SeqTemplatesParams(templates=["aba", "abb", "abc"], n_train=50), 1)
    x, y = d.train["main"].x, d.train["main"].y
    for row, lab in zip(x.tolist(), y.tolist(), strict=True):
        a, b, c = row
        assert [a == c, b == c, len({a, b, c}) == 3].index(True) == lab


def test_templates_bad_input() -> None:
    with pytest.raises(ValidationError, match="same length"):
        SeqTemplatesParams(templates=["aa", "abc"])
    with pytest.raises(ValidationError, match="at least 2"):
        SeqTemplatesParams(templates=["aa"])
    with pytest.raises(ValidationError, match="n_symbols_test"):
        SeqTemplatesParams(templates=["abc", "aab"], n_symbols_test=2)
    with pytest.raises(SpecError, match="templates"):
        load_run_spec("length-same-different", ["task.params.templates=['a1','ab']"])
