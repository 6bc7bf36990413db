"""SCAN from its grammar: the phrase-structure rules, the interpretation function, every command.

Lake & Baroni, "Generalization without Systematicity" (ICML 2018; the benchmark behind catalogue
#54, #57, #63): a command is ``S``, ``S and S`` (do both, in order) or ``S after S`` (the second,
then the first); ``S`` is ``V``, ``V twice`` or ``V thrice``; ``V`` is a primitive ``U`` (walk,
look, run, jump), ``U left|right`` (turn, then act), ``U opposite left|right`` (turn twice, then
act), ``U around left|right`` (turn and act, four times), or the same three with ``turn`` (which
only turns). With the 4 primitives there are 34 ``V``, 102 ``S`` and 102 + 2 * 102**2 = 20,910
commands.

``Grammar`` carries the knobs of Zhou, Jiang & Bansal ("Data factors for better compositional
generalization", EMNLP 2023, #54): more primitives (``p5``, ``p6``, ... acting ``I_P5``, ...), and
a subset of the phrase forms (``templates``) and of the repeaters and conjunctions.
``interpret`` parses any command by the rules above, independently of how commands are listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

PRIMITIVES = ("walk", "look", "run", "jump")
DIRECTIONS = ("left", "right")
TURN = {"left": "I_TURN_LEFT", "right": "I_TURN_RIGHT"}
REPEATS = {"twice": 2, "thrice": 3}
CONJUNCTIONS = ("and", "after")
# The V-level phrase forms ("templates"); ``turn`` takes every form but the bare one.
TEMPLATES = ("plain", "direction", "opposite", "around")


def primitive_names(n: int) -> tuple[str, ...]:
    """The first ``n`` primitives: SCAN's four, then ``p5``, ``p6``, ... (#54's complexity knob)."""
    return PRIMITIVES[:n] + tuple(f"p{i}" for i in range(len(PRIMITIVES) + 1, n + 1))


def action_of(primitive: str) -> str:
    """The action token of a primitive: ``walk`` -> ``I_WALK``."""
    return f"I_{primitive.upper()}"


@dataclass(frozen=True)
class Grammar:
    """A SCAN grammar; the defaults give the original 20,910 commands."""

    n_primitives: int = 4
    templates: tuple[str, ...] = TEMPLATES
    repeats: tuple[str, ...] = ("twice", "thrice")
    conjunctions: tuple[str, ...] = CONJUNCTIONS

    @cached_property
    def primitives(self) -> tuple[str, ...]:
        return primitive_names(self.n_primitives)

    @cached_property
    def words(self) -> tuple[str, ...]:
        """The command vocabulary."""
        extra = ["turn", *DIRECTIONS, "opposite", "around"]
        return (*self.primitives, *extra, *self.repeats, *self.conjunctions)

    @cached_property
    def actions(self) -> tuple[str, ...]:
        """The action vocabulary."""
        return (*(action_of(u) for u in self.primitives), *TURN.values())

    @cached_property
    def phrases(self) -> tuple[str, ...]:
        """Every ``V``: a primitive alone or with a direction, ``opposite`` or ``around``."""
        out = []
        if "plain" in self.templates:
            out += list(self.primitives)
        for form, infix in (("direction", ""), ("opposite", "opposite "), ("around", "around ")):
            if form in self.templates:
                out += [f"{u} {infix}{d}" for u in (*self.primitives, "turn") for d in DIRECTIONS]
        return tuple(out)

    @cached_property
    def sentences(self) -> tuple[str, ...]:
        """Every ``S``: a phrase, optionally repeated."""
        return tuple(f"{v} {r}".strip() for v in self.phrases for r in ("", *self.repeats))

    @property
    def n_commands(self) -> int:
        """How many commands ``commands`` lists (without listing them)."""
        n = len(self.sentences)
        return n + len(self.conjunctions) * n * n

    def commands(self) -> list[str]:
        """Every command, in a fixed order: the sentences, then ``s1 CONJ s2`` for each pair."""
        ss = self.sentences
        return [*ss, *(f"{a} {c} {b}" for c in self.conjunctions for a in ss for b in ss)]


def _phrase(words: list[str]) -> list[str]:
    if not words or len(words) > 3:
        raise ValueError(f"not a SCAN phrase: {' '.join(words)!r}")
    head = words[0]
    act = [] if head == "turn" else [action_of(head)]
    if len(words) == 1:
        if head == "turn" or head in TURN or head in ("opposite", "around"):
            raise ValueError(f"not a SCAN phrase: {head!r}")
        return act
    d = words[-1]
    if d not in TURN:
        raise ValueError(f"not a SCAN direction: {d!r} in {' '.join(words)!r}")
    if len(words) == 2:
        return [TURN[d], *act]
    if words[1] == "opposite":
        return [TURN[d], TURN[d], *act]
    if words[1] == "around":
        return [TURN[d], *act] * 4
    raise ValueError(f"not a SCAN phrase: {' '.join(words)!r}")


def _sentence(words: list[str]) -> list[str]:
    if words and words[-1] in REPEATS:
        return _phrase(words[:-1]) * REPEATS[words[-1]]
    return _phrase(words)


def interpret(command: str) -> list[str]:
    """The action sequence of a command, by SCAN's interpretation rules (``and``: in order;
    ``after``: the second sentence first). Raises ``ValueError`` on a malformed command."""
    words = command.split()
    for conj in CONJUNCTIONS:
        if conj in words:
            i = words.index(conj)
            first, second = _sentence(words[:i]), _sentence(words[i + 1 :])
            return first + second if conj == "and" else second + first
    return _sentence(words)
