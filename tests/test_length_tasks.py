"""Formal-language and string tasks: formats, answers, splits, bad input (Delétang et al., #62)."""

from __future__ import annotations

import math

import pytest
import torch

from genlab.data import Split
from genlab.errors import SpecError
from genlab.losses import IGNORE
from genlab.spec import parse_spec
from genlab.tasks import TASKS
from genlab.tasks.formal_generators import FORMAL_TASKS, evaluate
from genlab.tasks.formal_language import FormalParams, formal_language
from genlab.tasks.seq_common import FIRST_SYMBOL
from genlab.tasks.seq_string import SeqStringParams, seq_string

SMALL = {"train_length": 8, "test_max": 20, "n_test_lengths": 3, "n_train": 60, "n_val": 10}


def rows(split):
    """(input symbols, answers) per example, decoded from tokens and targets."""
    out = []
    for x, y in zip(split.x.tolist(), split.y.tolist(), strict=True):
        inp = [t - FIRST_SYMBOL for t in x if t >= FIRST_SYMBOL]
        out.append((inp, [v for v in y if v != IGNORE]))
    return out


@pytest.mark.parametrize("name", sorted(FORMAL_TASKS))
def test_every_task_builds_with_lengths_beyond_training(name: str) -> None:
    data = formal_language(FormalParams(task=name, n_test=5, **SMALL), data_seed=0)
    info = data.info
    assert info.kind == "sequence" and info.extra["level"] in ("R", "DCF", "CS")
    assert data.test and all(s.meta["length"] > 8 for s in data.test.values())
    for split in data.test.values():
        for inp, ans in rows(split):
            assert len(inp) == split.meta["length"] and ans
    assert info.extra["max_length"] == max(s.x.shape[1] for s in data.splits().values())
    assert int(data.train["main"].x.max()) < info.vocab_size
    y = torch.cat([s.y[s.y != IGNORE] for s in data.splits().values()])
    assert int(y.max()) < info.n_outputs and int(y.min()) >= 0


def test_same_data_seed_same_data() -> None:
    a = formal_language(FormalParams(task="bucket_sort", n_test=5, **SMALL), 3)
    b = formal_language(FormalParams(task="bucket_sort", n_test=5, **SMALL), 3)
    c = formal_language(FormalParams(task="bucket_sort", n_test=5, **SMALL), 4)
    assert torch.equal(a.train["main"].x, b.train["main"].x)
    assert not torch.equal(a.train["main"].x, c.train["main"].x)


def answers(name: str) -> list[tuple[list[int], list[int]]]:
    data = formal_language(FormalParams(task=name, n_test=20, **SMALL), 1)
    return [r for s in data.test.values() for r in rows(s)]


def bits(v: list[int]) -> int:
    return sum(b << i for i, b in enumerate(v))


def test_answers_are_right() -> None:
    for inp, ans in answers("parity_check"):
        assert ans == [sum(inp) % 2]
    for inp, ans in answers("even_pairs"):
        pairs = sum(a != b for a, b in zip(inp, inp[1:], strict=False))
        assert ans == [int(pairs % 2 == 0)]
    for inp, ans in answers("reverse_string"):
        assert ans == inp[::-1]
    for inp, ans in answers("duplicate_string"):
        assert ans == inp + inp
    for inp, ans in answers("odd_first"):
        assert ans == inp[0::2] + inp[1::2]
    for inp, ans in answers("bucket_sort"):
        assert ans == sorted(inp)
    for inp, ans in answers("binary_addition"):
        i = inp.index(2)
        assert bits(ans) == bits(inp[:i]) + bits(inp[i + 1 :])
    for inp, ans in answers("binary_multiplication"):
        i = inp.index(2)
        assert bits(ans) == bits(inp[:i]) * bits(inp[i + 1 :])
    for inp, ans in answers("compute_sqrt"):
        assert bits(ans) == math.isqrt(bits(inp))
    for inp, ans in answers("cycle_navigation"):
        assert ans == [sum((0, 1, -1)[m] for m in inp) % 5]
    for inp, ans in answers("missing_duplicate"):
        i, h = inp.index(2), len(inp) // 2
        assert ans == [inp[i + h] if i < h else inp[i - h]]


def test_stack_manipulation_answer() -> None:
    for inp, ans in answers("stack_manipulation"):
        stack = []
        for t in inp:  # k = 2: 0, 1 symbols; 2 POP; 3, 4 PUSH 0, 1
            if t < 2:
                stack.append(t)
            elif t == 2:
                stack = stack[:-1]
            else:
                stack.append(t - 3)
        assert ans == stack[::-1] + [2]


def test_expression_evaluation_follows_precedence() -> None:
    k = 5
    plus, minus, times, lpar, rpar = (k + i for i in range(5))
    assert evaluate([2, plus, 3, times, 4], k) == (2 + 12) % 5
    assert evaluate([lpar, 2, plus, 3, rpar, times, 4], k) == 0
    assert evaluate([4, minus, 3, minus, 2], k) == (4 - 3 - 2) % 5
    for inp, ans in answers("modular_arithmetic_brackets"):
        assert ans == [evaluate(inp, 5)]


def test_solve_equation_has_a_unique_solution() -> None:
    k = 5
    for inp, ans in answers("solve_equation"):
        expr, value = inp[:-2], inp[-1]
        assert inp[-2] == k + 6
        sols = [x for x in range(k) if evaluate(expr, k, x) == value]
        assert sols == ans


def test_seq_string_format() -> None:
    p = SeqStringParams(op="reverse", train_length=4, test_max=8, n_train=20, n_val=0, n_test=5)
    data = seq_string(p, 0)
    x, y = data.test["len_008"].x[0].tolist(), data.test["len_008"].y[0].tolist()
    assert x[8] == 2 and x[9:] == x[:8][::-1]  # input, SEP, reversed input
    assert y[8:] == x[9:] + [3] and set(y[:8]) == {IGNORE}  # next-token targets, EOS
    assert data.info.extra["train_length"] == 4


@pytest.mark.parametrize(
    "params, field",
    [
        ({"task": "reverse_string", "alphabet_size": 1}, "alphabet_size"),
        ({"task": "parity_check", "alphabet_size": 3}, "alphabet_size"),
        ({"task": "parity_check", "train_length": 10, "test_min": 10}, "test_min"),
        ({"task": "parity_check", "train_length": 10, "test_max": 9}, "test_max"),
        ({"task": "missing_duplicate", "train_length": 1}, "train_length"),
        ({"task": "nope"}, "task"),
    ],
)
def test_bad_task_params_name_the_field(params: dict, field: str) -> None:
    with pytest.raises(SpecError, match=field):
        TASKS.params("formal_language", params, "task.params")


def test_seq_addition_formats() -> None:
    from genlab.tasks.seq_addition import AdditionParams, example, seq_addition

    x, y = example([9, 1], [2, 0], "plain")  # 19 + 02 = 021, most significant digit first
    assert x == [6, 14, 4, 5, 7, 2, 5, 7, 6] and y[5:] == [5, 7, 6, 3]
    x, y = example([9, 1], [2, 0], "reversed")
    assert x[-3:] == [6, 7, 5]
    x, y = example([9, 1], [2, 0], "index_hints", hint0=3)
    assert x[:4] == [18, 14, 19, 6] and x[-6:] == [18, 6, 19, 7, 20, 5]
    data = seq_addition(
        AdditionParams(format="index_hints", train_length=3, test_max=6, n_train=50, n_test=5), 0
    )
    assert int(data.train["main"].x.max()) < data.info.vocab_size
    assert list(data.test) == ["len_004", "len_005", "len_006"]
    with pytest.raises(SpecError, match="n_hints"):
        TASKS.params("seq_addition", {"test_max": 10, "n_hints": 5}, "task.params")


def test_seq_string_bad_input() -> None:
    with pytest.raises(SpecError, match="alphabet_size"):
        TASKS.params("seq_string", {"alphabet_size": 1}, "task.params")
    with pytest.raises(SpecError, match="alphabet_size"):
        TASKS.params("seq_string", {"unique": True, "alphabet_size": 10, "test_max": 20}, "t")
    with pytest.raises(SpecError, match="test_min"):
        TASKS.params("seq_string", {"train_length": 8, "test_min": 5}, "task.params")


def test_spec_with_formal_task_validates() -> None:
    spec = parse_spec(
        {
            "task": {"name": "formal_language", "params": {"task": "odd_first"}},
            "model": {"name": "lstm"},
            "steps": 1,
        }
    )
    assert spec.task.params["train_length"] == 40 and spec.task.params["test_max"] == 500
    assert len(FORMAL_TASKS) == 15


def test_fresh_batches_are_new_each_step_and_a_pure_function_of_seed_and_step() -> None:
    """``fresh``: the paper's regime, a new batch every step, all of one training length."""
    p = FormalParams(task="reverse_string", fresh=True, n_test=5, **SMALL)
    a, b = formal_language(p, 3).train["main"], formal_language(p, 3).train["main"]
    assert torch.equal(a.stream(7, 16)[0], b.stream(7, 16)[0])  # same seed and step: same batch
    assert not torch.equal(formal_language(p, 4).train["main"].stream(7, 16)[0], a.stream(7, 16)[0])
    seen = set()
    for k in range(12):
        x, y = a.stream(k, 16)
        n = (x >= FIRST_SYMBOL).sum(1)
        assert x.shape[0] == 16 and bool((n == n[0]).all()) and 1 <= int(n[0]) <= 8
        assert [r[0][::-1] for r in rows(Split(x, y))] == [r[1] for r in rows(Split(x, y))]
        seen.add(x.numpy().tobytes())
    assert len(seen) == 12
    assert (
        formal_language(FormalParams(task="reverse_string", **SMALL), 3).train["main"].stream
        is None
    )


def test_fresh_batches_resume_exactly(tmp_path) -> None:
    """A run that crashes mid-way resumes from its checkpoint and draws the batches it would
    have drawn: its metrics equal an uninterrupted run's."""
    import pandas as pd

    from genlab.engine import run_spec
    from genlab.store import Store

    spec = parse_spec(
        {
            "task": {
                "name": "formal_language",
                "params": {
                    "task": "parity_check",
                    "fresh": True,
                    "train_length": 4,
                    "test_max": 6,
                    "n_test_lengths": 1,
                    "n_train": 16,
                    "n_val": 16,
                    "n_test": 16,
                },
            },
            "model": {"name": "lstm", "params": {"hidden": 8}},
            "steps": 40,
            "batch_size": 8,
            "checkpoint_every": 10,
            "eval": {"every": 10, "log_points": 0},
        }
    )

    def crash(step: int, metrics: dict) -> None:
        if step == 30:
            raise RuntimeError("killed")

    crashed = Store(tmp_path / "crashed")
    with pytest.raises(Exception, match="killed"):
        run_spec(spec, crashed, progress=False, on_eval=crash)
    resumed = run_spec(spec, crashed, progress=False)
    assert resumed.status == "done" and resumed.resumed_from == 20
    ref = Store(tmp_path / "ref")
    run_spec(spec, ref, progress=False)
    pd.testing.assert_frame_equal(
        crashed.metrics(spec.run_id), ref.metrics(spec.run_id), check_exact=True
    )


def test_fresh_batches_are_not_stacked() -> None:
    """The vmap executor trains a streaming task one replica at a time (its batches are drawn per
    replica, with no row indices to stack)."""
    from genlab.engine.train import prepare
    from genlab.sweep.stacked import unstackable_reason

    task = {
        "task": "parity_check",
        "train_length": 4,
        "test_max": 6,
        "n_test_lengths": 1,
        "n_train": 16,
        "n_val": 16,
        "n_test": 16,
    }
    specs = [
        parse_spec(
            {
                "task": {"name": "formal_language", "params": {**task, "fresh": f}},
                "model": {"name": "lstm", "params": {"hidden": 8}},
                "steps": 2,
                "batch_size": 8,
            }
        )
        for f in (True, False)
    ]
    fresh, fixed = (prepare(s) for s in specs)
    assert "streams" in unstackable_reason(fresh)
    assert unstackable_reason(fixed) is None
    assert "main" not in fresh.sampler.indices() and "main" in fixed.sampler.indices()
