"""Samplers for the 15 formal-language tasks of Delétang et al. (ICLR 2023, catalogue #62).

Each sampler draws one example of input length ``n`` over an alphabet (or modulus) of size ``k``:
``(inp, out)`` where ``inp`` lists input symbol ids ``0..n_symbols-1`` and ``out`` is one class id
(classification tasks) or the output sequence (transduction tasks). ``FORMAL_TASKS`` describes
every task: its Chomsky level (``R`` regular, ``DCF`` deterministic context-free, ``CS``
context-sensitive), its kind, its symbol and output counts, which lengths exist, and which
alphabet sizes make sense.

Formats (ours where the paper leaves a choice): binary numbers are least-significant bit first in
input and output; stack manipulation lists the initial stack bottom to top, then actions (``POP``,
``PUSH s``), and outputs the final stack top to bottom followed by an end-of-stack class;
arithmetic expressions use ``+ - *`` with the usual precedence, evaluated modulo ``k``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Sample = tuple[list[int], list[int]]
Sampler = Callable[[np.random.Generator, int, int], Sample]

PLUS, MINUS, TIMES, LPAR, RPAR, VAR, EQ = range(7)  # operator ids, offset by k in the token stream


def evaluate(tokens: list[int], k: int, x: int | None = None) -> int:
    """Value mod ``k`` of an expression over digits ``0..k-1`` and operators ``k + PLUS`` etc."""
    pos = 0

    def expr() -> int:
        nonlocal pos
        v = term()
        while pos < len(tokens) and tokens[pos] in (k + PLUS, k + MINUS):
            op = tokens[pos]
            pos += 1
            v = (v + term()) % k if op == k + PLUS else (v - term()) % k
        return v

    def term() -> int:
        nonlocal pos
        v = factor()
        while pos < len(tokens) and tokens[pos] == k + TIMES:
            pos += 1
            v = (v * factor()) % k
        return v

    def factor() -> int:
        nonlocal pos
        t = tokens[pos]
        pos += 1
        if t == k + LPAR:
            v = expr()
            pos += 1  # the closing bracket
            return v
        if t == k + VAR:
            assert x is not None
            return x
        return t

    return expr()


def _expression(rng: np.random.Generator, m: int, k: int, brackets: bool) -> list[int]:
    """A random well-formed expression of exactly ``m`` tokens (``m`` odd)."""
    if m == 1:
        return [int(rng.integers(k))]
    if brackets and rng.random() < 0.25:
        return [k + LPAR, *_expression(rng, m - 2, k, brackets), k + RPAR]
    left = 2 * int(rng.integers((m - 1) // 2)) + 1  # odd, in [1, m - 2]
    op = k + int(rng.integers(3))
    return [*_expression(rng, left, k, brackets), op, *_expression(rng, m - 1 - left, k, brackets)]


def _bits(rng: np.random.Generator, n: int) -> list[int]:
    return rng.integers(2, size=n).tolist()


def _to_int(bits: list[int]) -> int:
    return sum(b << i for i, b in enumerate(bits))


def _to_bits(v: int, width: int) -> list[int]:
    return [(v >> i) & 1 for i in range(width)]


def even_pairs(rng: np.random.Generator, n: int, k: int) -> Sample:
    s = _bits(rng, n)  # #ab + #ba is even iff the first and last symbols agree
    return s, [int(s[0] == s[-1])]


def parity_check(rng: np.random.Generator, n: int, k: int) -> Sample:
    s = _bits(rng, n)
    return s, [sum(s) % 2]


def modular_arithmetic(rng: np.random.Generator, n: int, k: int) -> Sample:
    s = _expression(rng, n, k, brackets=False)
    return s, [evaluate(s, k)]


def cycle_navigation(rng: np.random.Generator, n: int, k: int) -> Sample:
    s = rng.integers(3, size=n).tolist()  # 0 stay, 1 forward, 2 backward on a cycle of k states
    return s, [sum((0, 1, -1)[m] for m in s) % k]


def stack_manipulation(rng: np.random.Generator, n: int, k: int) -> Sample:
    start = int(rng.integers(n + 1))
    stack = rng.integers(k, size=start).tolist()
    actions = rng.integers(k + 1, size=n - start).tolist()  # 0 POP, 1 + s PUSH s
    inp = list(stack) + [k + a for a in actions]
    for a in actions:
        if a == 0:
            if stack:
                stack.pop()
        else:
            stack.append(a - 1)
    return inp, stack[::-1] + [k]


def reverse_string(rng: np.random.Generator, n: int, k: int) -> Sample:
    s = rng.integers(k, size=n).tolist()
    return s, s[::-1]


def modular_arithmetic_brackets(rng: np.random.Generator, n: int, k: int) -> Sample:
    s = _expression(rng, n, k, brackets=True)
    return s, [evaluate(s, k)]


def solve_equation(rng: np.random.Generator, n: int, k: int) -> Sample:
    """An expression with one digit replaced by ``x``, ``=``, its value: find ``x`` (unique)."""
    while True:
        s = _expression(rng, n - 2, k, brackets=True)
        digits = [i for i, t in enumerate(s) if t < k]
        i = digits[int(rng.integers(len(digits)))]
        answer, value = s[i], evaluate(s, k)
        s[i] = k + VAR
        if sum(evaluate(s, k, x) == value for x in range(k)) == 1:
            return [*s, k + EQ, value], [answer]


def duplicate_string(rng: np.random.Generator, n: int, k: int) -> Sample:
    s = rng.integers(k, size=n).tolist()
    return s, s + s


def missing_duplicate(rng: np.random.Generator, n: int, k: int) -> Sample:
    s = rng.integers(k, size=n // 2).tolist() * 2
    i = int(rng.integers(n))
    answer, s[i] = s[i], k  # k is the mask symbol
    return s, [answer]


def odd_first(rng: np.random.Generator, n: int, k: int) -> Sample:
    s = rng.integers(k, size=n).tolist()
    return s, s[0::2] + s[1::2]


def _two_numbers(rng: np.random.Generator, n: int) -> tuple[list[int], list[int]]:
    la = int(rng.integers(1, n - 1))
    return _bits(rng, la), _bits(rng, n - 1 - la)


def binary_addition(rng: np.random.Generator, n: int, k: int) -> Sample:
    a, b = _two_numbers(rng, n)
    return a + [2] + b, _to_bits(_to_int(a) + _to_int(b), max(len(a), len(b)) + 1)


def binary_multiplication(rng: np.random.Generator, n: int, k: int) -> Sample:
    a, b = _two_numbers(rng, n)
    return a + [2] + b, _to_bits(_to_int(a) * _to_int(b), len(a) + len(b))


def compute_sqrt(rng: np.random.Generator, n: int, k: int) -> Sample:
    s = _bits(rng, n)
    return s, _to_bits(math.isqrt(_to_int(s)), (n + 1) // 2)


def bucket_sort(rng: np.random.Generator, n: int, k: int) -> Sample:
    s = rng.integers(k, size=n).tolist()
    return s, sorted(s)


@dataclass(frozen=True)
class FormalTask:
    """One task: level, kind, sampler, symbol/output counts in ``k``, lengths, alphabet rule."""

    level: str  # R | DCF | CS
    kind: str  # classification | transduction
    sample: Sampler
    n_symbols: Callable[[int], int]
    n_outputs: Callable[[int], int]
    min_length: int = 1
    parity: str = "any"  # "odd" / "even": the only lengths the task has
    alphabet: tuple[int, int | None] = (2, None)  # (default, fixed value or None)
    alphabet_min: int = 2

    def valid_length(self, n: int) -> int:
        """The longest length ``<= n`` that the task has."""
        if self.parity == "odd" and n % 2 == 0:
            return n - 1
        if self.parity == "even" and n % 2 == 1:
            return n - 1
        return n


def _const(c: int) -> Callable[[int], int]:
    return lambda k: c


BINARY = (2, 2)
MOD = (5, None)
FORMAL_TASKS: dict[str, FormalTask] = {
    "even_pairs": FormalTask(
        "R", "classification", even_pairs, _const(2), _const(2), alphabet=BINARY
    ),
    "modular_arithmetic": FormalTask(
        "R",
        "classification",
        modular_arithmetic,
        lambda k: k + 3,
        lambda k: k,
        parity="odd",
        alphabet=MOD,
    ),
    "parity_check": FormalTask(
        "R", "classification", parity_check, _const(2), _const(2), alphabet=BINARY
    ),
    "cycle_navigation": FormalTask(
        "R", "classification", cycle_navigation, _const(3), lambda k: k, alphabet=MOD
    ),
    "stack_manipulation": FormalTask(
        "DCF", "transduction", stack_manipulation, lambda k: 2 * k + 1, lambda k: k + 1
    ),
    "reverse_string": FormalTask("DCF", "transduction", reverse_string, lambda k: k, lambda k: k),
    "modular_arithmetic_brackets": FormalTask(
        "DCF",
        "classification",
        modular_arithmetic_brackets,
        lambda k: k + 5,
        lambda k: k,
        parity="odd",
        alphabet=MOD,
    ),
    "solve_equation": FormalTask(
        "DCF",
        "classification",
        solve_equation,
        lambda k: k + 7,
        lambda k: k,
        min_length=3,
        parity="odd",
        alphabet=MOD,
    ),
    "duplicate_string": FormalTask(
        "CS", "transduction", duplicate_string, lambda k: k, lambda k: k
    ),
    "missing_duplicate": FormalTask(
        "CS",
        "classification",
        missing_duplicate,
        lambda k: k + 1,
        lambda k: k,
        min_length=2,
        parity="even",
    ),
    "odd_first": FormalTask("CS", "transduction", odd_first, lambda k: k, lambda k: k),
    "binary_addition": FormalTask(
        "CS", "transduction", binary_addition, _const(3), _const(2), min_length=3, alphabet=BINARY
    ),
    "binary_multiplication": FormalTask(
        "CS",
        "transduction",
        binary_multiplication,
        _const(3),
        _const(2),
        min_length=3,
        alphabet=BINARY,
    ),
    "compute_sqrt": FormalTask(
        "CS", "transduction", compute_sqrt, _const(2), _const(2), alphabet=BINARY
    ),
    "bucket_sort": FormalTask(
        "CS", "transduction", bucket_sort, lambda k: k, lambda k: k, alphabet=MOD
    ),
}
