"""String rewrites: an instruction ``x -> y`` and an input ``z``; replace the leftmost ``x`` in ``z``.

The symbolic instruction-following task of Zhang, Wang & Charton, "Instruction Diversity Drives
Generalization To Unseen Tasks" (2024, catalogue #70): each rule of a Markov algorithm is an
instruction; a model trained on ``n_rules`` distinct rules (I) with ``per_rule`` examples each (S)
is tested on rules it never saw. Rules are random strings over ``alphabet`` letters (``x`` of
length ``x_len``, ``y`` of ``y_min..y_max``); an input is a random string of ``input_min..input_max``
letters with ``x`` inserted (or, with probability ``p_absent``, without ``x``: then the output is
the input, the "no-op" variant). ``zipf`` > 0 samples training rules with probabilities
proportional to ``1 / rank**zipf`` instead of uniformly, at the same total ``n_rules * per_rule``.

Rows use the source -> target layout (``seq2seq_common``): ``x ARROW y SEP z`` then the rewritten
``z``. ``val/main``: the training rules on fresh inputs; ``test/unseen_rules``: ``n_test_rules``
rules disjoint from the training ones.
"""

from __future__ import annotations

import numpy as np
from pydantic import Field, model_validator

from genlab.data import Split, TaskData
from genlab.registry import Params
from genlab.tasks import TASKS
from genlab.tasks.seq2seq_common import FIRST, pack_pairs, seq2seq_info

ARROW, SEP = FIRST, FIRST + 1
LETTER = FIRST + 2


class RewriteParams(Params):
    """Params of ``string_rewrite``."""

    alphabet: int = Field(6, ge=2, le=26, description="letters")
    x_len: int = Field(2, ge=1, le=6, description="length of the pattern x")
    y_min: int = Field(1, ge=1, le=6, description="shortest replacement y")
    y_max: int = Field(3, ge=1, le=6, description="longest replacement y")
    input_min: int = Field(6, ge=1)
    input_max: int = Field(10, ge=1, le=64)
    n_rules: int = Field(100, ge=1, description="distinct training rules (I)")
    per_rule: int = Field(50, ge=1, description="training examples per rule (S), on average")
    zipf: float = Field(0.0, ge=0, le=4, description="0: rules sampled uniformly")
    p_absent: float = Field(0.0, ge=0, lt=1, description="share of inputs without x (no-op)")
    n_val: int = Field(500, ge=0, description="val rows: training rules, fresh inputs")
    n_test_rules: int = Field(200, ge=1, description="unseen rules in the test split")
    n_test: int = Field(1000, ge=1, description="test rows")

    @model_validator(mode="after")
    def _check(self) -> RewriteParams:
        if self.input_max < max(self.input_min, self.x_len):
            raise ValueError(f"input_max ({self.input_max}) must be >= input_min and x_len")
        if self.y_max < self.y_min:
            raise ValueError(f"y_max ({self.y_max}) must be >= y_min ({self.y_min})")
        ys = sum(self.alphabet**k for k in range(self.y_min, self.y_max + 1))
        space = self.alphabet**self.x_len * ys
        if self.n_rules + self.n_test_rules > space // 2:
            raise ValueError(
                f"n_rules: {self.n_rules} + {self.n_test_rules} test rules exceed half of the "
                f"{space} possible rules; raise alphabet or x_len"
            )
        return self


def rewrite(z: list[int], x: list[int], y: list[int]) -> list[int]:
    """``z`` with its leftmost occurrence of ``x`` replaced by ``y`` (unchanged without one)."""
    k = len(x)
    for i in range(len(z) - k + 1):
        if z[i : i + k] == x:
            return z[:i] + y + z[i + k :]
    return list(z)


def _rules(p: RewriteParams, rng: np.random.Generator, n: int, avoid: set) -> list[tuple]:
    out: list[tuple] = []
    seen = set(avoid)
    while len(out) < n:
        x = tuple(rng.integers(0, p.alphabet, p.x_len).tolist())
        y = tuple(rng.integers(0, p.alphabet, rng.integers(p.y_min, p.y_max + 1)).tolist())
        if x != y and (x, y) not in seen:
            seen.add((x, y))
            out.append((x, y))
    return out


def _input(p: RewriteParams, rng: np.random.Generator, x: tuple) -> list[int]:
    n = int(rng.integers(max(p.input_min, len(x)), p.input_max + 1))
    if rng.random() < p.p_absent:  # a string without x: redraw until it has none
        while True:
            z = rng.integers(0, p.alphabet, n).tolist()
            if rewrite(z, list(x), []) == z:
                return z
    z = rng.integers(0, p.alphabet, n - len(x)).tolist()
    at = int(rng.integers(0, len(z) + 1))
    return z[:at] + list(x) + z[at:]


def _widths(p: RewriteParams) -> tuple[int, int]:
    """(source, target + EOS) widths that fit any row."""
    return p.x_len + p.y_max + 2 + p.input_max, max(
        p.input_max, p.input_max - p.x_len + p.y_max
    ) + 1


def _rows(p, rng, rules: list[tuple], which: np.ndarray, meta: dict) -> Split:  # noqa: ANN001
    src, tgt = [], []
    for r in which:
        x, y = rules[r]
        z = _input(p, rng, x)
        src.append(
            [LETTER + c for c in x]
            + [ARROW]
            + [LETTER + c for c in y]
            + [SEP]
            + [LETTER + c for c in z]
        )
        tgt.append([LETTER + c for c in rewrite(z, list(x), list(y))])
    return pack_pairs(src, tgt, *_widths(p), meta)


@TASKS.register(
    "string_rewrite",
    RewriteParams,
    papers=(70,),
    family="compositional",
    tiny={"n_rules": 10, "per_rule": 30, "n_val": 50, "n_test_rules": 10, "n_test": 100},
)
def string_rewrite(params: RewriteParams, data_seed: int) -> TaskData:
    """Replace-the-leftmost rewrite rules; test on unseen rules (Zhang, Wang & Charton, #70)."""
    rng = np.random.default_rng(data_seed)
    train_rules = _rules(params, rng, params.n_rules, set())
    test_rules = _rules(params, rng, params.n_test_rules, set(train_rules))
    total = params.n_rules * params.per_rule
    if params.zipf > 0:
        w = 1.0 / np.arange(1, params.n_rules + 1) ** params.zipf
        which = rng.choice(params.n_rules, size=total, p=w / w.sum())
    else:
        which = np.repeat(np.arange(params.n_rules), params.per_rule)
    meta = {"n_rules": params.n_rules}
    train = {"main": _rows(params, rng, train_rules, which, meta)}
    val_which = rng.integers(0, params.n_rules, params.n_val)
    val = {"main": _rows(params, rng, train_rules, val_which, meta)} if params.n_val else {}
    test_which = rng.integers(0, params.n_test_rules, params.n_test)
    test = {"unseen_rules": _rows(params, rng, test_rules, test_which, {"shift": "unseen_rules"})}
    info = seq2seq_info(LETTER + params.alphabet, *_widths(params), chance=0.0)
    return TaskData(train, val, test, info)
