"""Arithmetic length tasks: multiplication in every format, addition scratchpad / Turing programs,
chains that decode to the right values, lengths, determinism, bad input; the FIRE encoding."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from genlab.data import TaskInfo
from genlab.errors import SpecError
from genlab.losses import IGNORE
from genlab.models import MODELS
from genlab.models.positional import FIRE, POSITIONAL
from genlab.tasks import TASKS
from genlab.tasks.seq_addition import AdditionParams, seq_addition
from genlab.tasks.seq_addition import example as add_example
from genlab.tasks.seq_arith import ANS, BAR, DIGIT, EOS, EQ, HEAD, HINT, OP, SEP
from genlab.tasks.seq_multiplication import example as mul_example

RNG = np.random.default_rng(0)


def number(tokens: list[int], order: str) -> int:
    """The value of digit tokens (hints dropped), ``plain`` or ``reversed`` order."""
    ds = [t - DIGIT for t in tokens if DIGIT <= t < DIGIT + 10]
    ds = ds if order == "reversed" else ds[::-1]
    return sum(d * 10**i for i, d in enumerate(ds))


def answer(x: list[int], chain: bool) -> list[int]:
    """The final answer tokens: after ``ANS`` (chain formats) or ``=``, up to the end."""
    return x[x.index(ANS if chain else EQ) + 1 :]


def check_targets(x: list[int], y: list[int]) -> None:
    """Next-token targets: IGNORE on the prompt, then the input shifted by one, then EOS."""
    eq = x.index(EQ)
    assert all(t == IGNORE for t in y[:eq])
    assert y[eq:-1] == x[eq + 1 :] and y[-1] == EOS


def draw(n: int) -> list[int]:
    return RNG.integers(10, size=n).tolist()


def val(ds: list[int]) -> int:
    return sum(d * 10**i for i, d in enumerate(ds))


@pytest.mark.parametrize("fmt", ["plain", "reversed", "index_hints", "scratchpad", "turing"])
def test_multiplication_answers_are_products(fmt: str) -> None:
    for _ in range(30):
        n, m = int(RNG.integers(1, 9)), 1 if fmt == "turing" else int(RNG.integers(1, 4))
        a, b = draw(n), draw(m)
        x, y = mul_example(a, b, fmt, hint0=3)
        check_targets(x, y)
        order = "plain" if fmt in ("plain", "turing") else "reversed"
        ans = answer(x, fmt in ("scratchpad", "turing"))
        assert number(ans, order) == val(a) * val(b)
        assert len([t for t in ans if DIGIT <= t < DIGIT + 10]) == n + m
        if fmt == "index_hints":  # every product digit follows the hint of its index
            assert ans[0::2] == [HINT + 3 + i for i in range(n + m)]


def test_multiplication_scratchpad_steps_decode() -> None:
    a, b = draw(6), draw(3)
    x, _ = mul_example(a, b, "scratchpad")
    chain = x[x.index(EQ) + 1 : x.index(ANS)]
    parts = [[]]
    for t in chain:
        parts[-1].append(t) if t != SEP else parts.append([])
    parts = parts[:-1]
    assert len(parts) == 2 * len(b)
    total = 0
    for j in range(len(b)):
        pairs, running = parts[2 * j], parts[2 * j + 1]
        assert len(pairs) == 2 * (len(a) + len(b)) and len(running) == len(a) + len(b)
        assert number(pairs[0::2], "reversed") == val(a) * b[j] * 10**j
        total += val(a) * b[j] * 10**j
        assert number(running, "reversed") == total


def tapes(x: list[int]) -> list[list[int]]:
    chain = x[x.index(EQ) + 1 : x.index(ANS)]
    out = [[]]
    for t in chain:
        out[-1].append(t) if t != SEP else out.append([])
    return out[:-1]


def test_addition_turing_tapes_are_local_edits() -> None:
    """Tape k: the operands with the head before digit k-1 (from the right), the carry, the low k
    sum digits; consecutive tapes differ only by the moved heads and the written digit/carry."""
    for n in (1, 4, 7):
        a, b = draw(n), draw(n)
        x, y = add_example(a, b, "turing")
        check_targets(x, y)
        assert number(answer(x, True), "plain") == val(a) + val(b)
        ts = tapes(x)
        assert len(ts) == n
        s = val(a) + val(b)
        for k, tp in enumerate(ts, start=1):
            left, right = tp[: tp.index(BAR)], tp[tp.index(BAR) + 1 :]
            ops = [[], []]
            cur = 0
            for t in left:
                cur += t == OP
                if t != OP:
                    ops[cur].append(t)
            for o, ds in zip(ops, (a, b), strict=True):
                assert o.count(HEAD) == 1 and len(o) - 1 - o.index(HEAD) == k  # k digits right
                assert number(o, "plain") == val(ds)
            carry, written = right[0] - DIGIT, number(right[1:], "plain")
            assert len(right) == k + 1
            assert written == s % 10**k
            assert carry == (val(a) % 10**k + val(b) % 10**k) // 10**k


def test_multiplication_turing_tapes_decode() -> None:
    a, b = draw(5), draw(1)
    x, y = mul_example(a, b, "turing")
    ts = tapes(x)
    assert len(ts) == 5
    for k, tp in enumerate(ts, start=1):
        right = tp[tp.index(BAR) + 1 :]
        assert number(right[1:], "plain") == (val(a) * b[0]) % 10**k
        assert right[0] - DIGIT == (val(a) % 10**k) * b[0] // 10**k


def test_addition_scratchpad_steps_decode() -> None:
    a, b = draw(6), draw(6)
    x, y = add_example(a, b, "scratchpad")
    check_targets(x, y)
    assert number(answer(x, True), "plain") == val(a) + val(b)
    steps = tapes(x)
    carry = 0
    for i, st in enumerate(steps):
        ai, bi, ci, co, si = (t - DIGIT for t in st)
        assert (ai, bi, ci) == (a[i], b[i], carry)
        assert 10 * co + si == ai + bi + ci
        carry = co


def test_addition_existing_formats_unchanged() -> None:
    """The old formats' tokens (stored runs depend on them) are the ones of before."""
    x, y = add_example([9, 1], [2, 0], "plain")
    assert x == [6, 14, 4, 5, 7, 2, 5, 7, 6] and y[5:] == [5, 7, 6, 3]
    x, _ = add_example([9, 1], [2, 0], "index_hints", hint0=3)
    assert x[:4] == [18, 14, 19, 6] and x[-6:] == [18, 6, 19, 7, 20, 5]
    d = seq_addition(AdditionParams(format="index_hints", n_train=10, n_val=0, n_test=2), 0)
    assert d.info.vocab_size == 15 + 34


@pytest.mark.parametrize(
    ("task", "params"),
    [
        ("seq_multiplication", {"format": "scratchpad", "multiplier_max": 2}),
        ("seq_multiplication", {"format": "turing"}),
        ("seq_multiplication", {"format": "index_hints", "multiplier_max": 3}),
        ("seq_addition", {"format": "turing"}),
        ("seq_addition", {"format": "scratchpad"}),
    ],
)
def test_chain_tasks_lengths_vocab_and_determinism(task: str, params: dict) -> None:
    small = {
        "train_length": 3,
        "test_max": 6,
        "n_test_lengths": 2,
        "n_train": 40,
        "n_val": 5,
        "n_test": 6,
        **params,
    }
    build = TASKS.get(task).obj
    p = TASKS.params(task, small, "task.params")
    d1, d2 = build(p, 7), build(p, 7)
    assert list(d1.test) == ["len_004", "len_006"]
    for name, s in d1.splits().items():
        assert torch.equal(s.x, d2.splits()[name].x) and torch.equal(s.y, d2.splits()[name].y)
        assert int(s.x.max()) < d1.info.vocab_size and int(s.y.max()) < d1.info.n_outputs
    widths = [s.x.shape[1] for s in d1.splits().values()]
    assert d1.info.extra["max_length"] == max(widths)
    assert d1.info.extra["train_length"] == 3
    assert not torch.equal(build(p, 8).train["main"].x, d1.train["main"].x)


def test_model_too_short_for_test_chains_is_an_error() -> None:
    d = seq_addition(
        AdditionParams(format="turing", train_length=2, test_max=6, n_train=10, n_test=2, n_val=0),
        0,
    )
    longest = d.info.extra["max_length"]
    assert longest > d.train["main"].x.shape[1]  # test chains are longer than training ones
    with pytest.raises(ValueError, match="max_len"):
        MODELS.get("transformer").obj(
            MODELS.params("transformer", {"max_len": longest - 1, "d_model": 8, "n_heads": 2}, "m"),
            d.info,
        )


def test_bad_params_are_spec_errors() -> None:
    with pytest.raises(SpecError, match="test_min"):
        TASKS.params("seq_multiplication", {"train_length": 6, "test_min": 6}, "task.params")
    with pytest.raises(SpecError, match="multiplier_min"):
        TASKS.params("seq_multiplication", {"multiplier_min": 3, "multiplier_max": 2}, "t")
    with pytest.raises(SpecError, match="multiplier_max"):
        TASKS.params("seq_multiplication", {"format": "turing", "multiplier_max": 2}, "t")
    with pytest.raises(SpecError, match="n_hints"):
        TASKS.params(
            "seq_multiplication", {"test_max": 10, "multiplier_max": 2, "n_hints": 11}, "t"
        )
    with pytest.raises(SpecError, match="format"):
        TASKS.params("seq_multiplication", {"format": "binary"}, "t")
    with pytest.raises(SpecError, match="format"):
        TASKS.params("seq_addition", {"format": "unknown"}, "t")


# ---- FIRE --------------------------------------------------------------------------------------


def test_fire_bias_shape_extrapolates_and_learns() -> None:
    torch.manual_seed(0)
    fire = FIRE(d_model=16, n_heads=4, max_len=32)
    b = fire.attention_bias(32)
    assert b.shape == (4, 32, 32) and torch.isfinite(b).all()
    long = fire.attention_bias(200)  # beyond max_len: still defined
    assert long.shape == (4, 200, 200) and torch.isfinite(long).all()
    assert torch.allclose(long[:, :32, :32], b)  # below the threshold, a function of i - j only
    assert torch.allclose(b[:, 5, 3], b[:, 20, 18])
    long.sum().backward()
    for p in (fire.c, fire.threshold, *fire.mlp.parameters()):
        assert p.grad is not None
    assert fire.c.grad.abs() > 0
    assert POSITIONAL["fire"] is FIRE


def test_fire_transformer_is_causal_and_trains() -> None:
    torch.manual_seed(0)
    info = TaskInfo(kind="sequence", n_outputs=12, vocab_size=12, seq_len=10)
    model = MODELS.get("transformer").obj(
        MODELS.params(
            "transformer", {"d_model": 16, "n_heads": 2, "positional": "fire", "max_len": 64}, "m"
        ),
        info,
    )
    x = torch.randint(0, 12, (3, 20))
    out = model(x)
    assert out.shape == (3, 20, 12)
    x2 = x.clone()
    x2[:, 12:] = (x2[:, 12:] + 1) % 12  # later tokens change: earlier outputs must not
    assert torch.allclose(model(x2)[:, :12], out[:, :12], atol=1e-6)
    model(torch.randint(0, 12, (2, 64))).sum().backward()
    grads = [p.grad for p in model.pos.parameters()]
    assert grads and all(g is not None and torch.isfinite(g).all() for g in grads)


@pytest.mark.parametrize("preset", ["length-multiplication", "length-turing-addition"])
def test_presets_run(preset: str, tmp_path) -> None:
    from genlab.engine import run_spec
    from genlab.spec import load_run_spec
    from genlab.store import Store

    small = [
        "steps=2",
        "checkpoint_every=2",
        "eval.every=2",
        "task.params.n_train=20",
        "task.params.n_val=4",
        "task.params.n_test=4",
        "model.params.d_model=16",
    ]
    store = Store(tmp_path / "s")
    result = run_spec(load_run_spec(preset, small), store, progress=False)
    m = store.metrics(result.run_id)
    assert "test/out_of_range" in set(m["split"])
