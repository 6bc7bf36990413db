"""Token layout and rendering shared by the arithmetic length tasks (``seq_addition``,
``seq_multiplication``): digit orders, index hints, next-token targets, and the tape states of
Turing-program chains of thought (Hou et al., #87).

Tokens: ``PAD`` 0, ``BLANK`` 1, ``=`` 2, ``EOS`` 3, the operator (``+`` or ``*``) 4, digits 5-14,
then either index hints from 15 (format ``index_hints``) or, in the chain-of-thought formats
(``scratchpad``, ``turing``, which use no hints), ``HEAD`` 15 (a tape head marker), ``BAR`` 16
(separates a tape's input from its output region), ``SEP`` 17 (ends a step) and ``ANS`` 18 (the
final answer follows). Digit lists are least significant first throughout the code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from genlab.losses import IGNORE

EQ, EOS, OP, DIGIT, HINT = 2, 3, 4, 5, 15
HEAD, BAR, SEP, ANS = 15, 16, 17, 18
N_CHAIN_TOKENS = 19  # vocabulary of the chain formats
DIRECT_FORMATS = ("plain", "reversed", "index_hints")
CHAIN_FORMATS = ("scratchpad", "turing")


def digits_of(value: int, width: int) -> list[int]:
    """``width`` decimal digits of ``value``, least significant first (leading zeros kept)."""
    if value >= 10**width:
        raise ValueError(f"{value} does not fit in {width} digits")
    return [(value // 10**i) % 10 for i in range(width)]


def value_of(digits: list[int]) -> int:
    """The number whose digits (least significant first) are ``digits``."""
    return sum(d * 10**i for i, d in enumerate(digits))


def render(digits: list[int], fmt: str, hint0: int = 0) -> list[int]:
    """Tokens of a digit list in a direct format: ``plain`` (most significant first),
    ``reversed`` (least significant first) or ``index_hints`` (reversed, each digit preceded by
    the hint token of its index, offset by ``hint0``; Zhou et al., #42)."""
    if fmt == "plain":
        return [DIGIT + d for d in digits[::-1]]
    if fmt == "reversed":
        return [DIGIT + d for d in digits]
    return [t for i, d in enumerate(digits) for t in (HINT + hint0 + i, DIGIT + d)]


def plain(digits: list[int]) -> list[int]:
    """Digit tokens, most significant first."""
    return [DIGIT + d for d in digits[::-1]]


def next_token(prompt: list[int], answer: list[int]) -> tuple[list[int], list[int]]:
    """Inputs ``prompt + answer`` and next-token targets: ``IGNORE`` on the prompt, then every
    answer token (chain of thought included) and ``EOS``."""
    return prompt + answer, [IGNORE] * (len(prompt) - 1) + answer + [EOS]


def tape(
    operands: list[list[int]], heads: list[int | None], carry: int, out: list[int]
) -> list[int]:
    """One Turing-program tape state (Hou et al., #87): the operands (most significant first,
    joined by the operator), operand ``k`` with ``HEAD`` before its digit of index ``heads[k]``
    (none when ``None``), then ``BAR``, the carry digit, the output digits written so far
    (``out``, least significant first, rendered most significant first) and ``SEP``."""
    toks: list[int] = []
    for k, (ds, head) in enumerate(zip(operands, heads, strict=True)):
        if k:
            toks.append(OP)
        for i in range(len(ds) - 1, -1, -1):
            if head == i:
                toks.append(HEAD)
            toks.append(DIGIT + ds[i])
    return toks + [BAR, DIGIT + carry] + plain(out) + [SEP]


def turing_chain(
    operands: list[list[int]],
    step: Callable[[int, int], tuple[int, int]],
    headed: Sequence[bool],
) -> tuple[list[int], list[int]]:
    """A right-to-left digit machine as a Turing program (Hou et al., #87): tape ``k`` (``k = 1..n``
    for ``n`` digits of the first operand) copies tape ``k - 1`` with the head moved one digit
    left (onto digit ``k - 1`` of every ``headed`` operand), the carry replaced and one output
    digit written. ``step(i, carry) -> (digit, carry)`` is the machine's local rule. Returns the
    chain tokens and the output digits, least significant first, the final carry last."""
    chain: list[int] = []
    carry, out = 0, []
    for i in range(len(operands[0])):
        d, carry = step(i, carry)
        out.append(d)
        chain += tape(operands, [i if h else None for h in headed], carry, out)
    return chain, out + [carry]
