"""The standard SCAN splits, rebuilt from the grammar: which commands train and which test.

- ``simple`` (Lake & Baroni 2018): a random 80/20 split of the commands (16,728 / 4,182).
- ``length``: commands whose action sequence has at most 22 actions train, the rest (24 to 48
  actions; none has 23) test (16,990 / 3,920).
- ``addprim_jump`` / ``addprim_turn_left``: every command without the primitive trains, plus the
  bare primitive (``jump``, ``turn left``) repeated until it is 10% of the training set; every
  other command with it tests (14,670 / 7,706 and 21,890 / 1,208).
- Template splits (Loula, Baroni & Lake 2018, "Rearranging the familiar"): ``jump_around_right``
  tests the commands with ``jump around right`` (1,173), ``around_right`` / ``opposite_right`` /
  ``right`` those with ``X around right`` / ``X opposite right`` / ``X right`` for the four
  primitives X (4,476 each). The released files also leave out every command with the ``turn``
  phrase of the same form (``turn around right``, ``turn opposite right``, ``turn right``; 1,209
  commands), which trains 18,528 / 15,225 and gives exactly the published sizes; we do the same.

``split_commands`` returns ``(train, test)`` lists of commands; the bare primitive's repetitions
are counted in ``train``.
"""

from __future__ import annotations

import numpy as np

from genlab.tasks.scan_grammar import Grammar, interpret

SPLITS = (
    "simple",
    "length",
    "addprim_jump",
    "addprim_turn_left",
    "jump_around_right",
    "around_right",
    "opposite_right",
    "right",
)
LENGTH_CUT = 22
TEMPLATE_FORM = {"around_right": "around", "opposite_right": "opposite", "right": "direction"}
ADDPRIM = {"addprim_jump": "jump", "addprim_turn_left": "turn left"}


def _phrase_in(command: str, phrases: set[str]) -> bool:
    """Whether a sentence of ``command`` is built on one of ``phrases`` (a ``V``)."""
    words = command.split()
    for conj in ("and", "after"):
        if conj in words:
            i = words.index(conj)
            return _phrase_in(" ".join(words[:i]), phrases) or _phrase_in(
                " ".join(words[i + 1 :]), phrases
            )
    if words[-1] in ("twice", "thrice"):
        words = words[:-1]
    return " ".join(words) in phrases


def _template_phrases(split: str, grammar: Grammar) -> tuple[set[str], set[str]]:
    """(held-out phrases, left-out ``turn`` phrases) of a template split."""
    if split == "jump_around_right":
        return {"jump around right"}, {"turn around right"}
    infix = {"around": "around ", "opposite": "opposite ", "direction": ""}[TEMPLATE_FORM[split]]
    return {f"{u} {infix}right" for u in grammar.primitives}, {f"turn {infix}right"}


def required_templates(split: str) -> set[str]:
    """The phrase forms a split needs in the grammar."""
    if split == "addprim_turn_left":
        return {"direction"}
    if split == "jump_around_right":
        return {"around", "plain"}
    if split in TEMPLATE_FORM:
        return {TEMPLATE_FORM[split]}
    if split == "addprim_jump":
        return {"plain"}
    return set()


def split_commands(
    split: str, grammar: Grammar, rng: np.random.Generator, prim_share: float = 0.1
) -> tuple[list[str], list[str]]:
    """``(train, test)`` commands of ``split`` (see the module docstring)."""
    commands = grammar.commands()
    if split == "simple":
        perm = rng.permutation(len(commands))
        n_train = round(0.8 * len(commands))
        return [commands[i] for i in perm[:n_train]], [commands[i] for i in perm[n_train:]]
    if split == "length":
        lengths = [len(interpret(c)) for c in commands]
        train = [c for c, n in zip(commands, lengths, strict=True) if n <= LENGTH_CUT]
        return train, [c for c, n in zip(commands, lengths, strict=True) if n > LENGTH_CUT]
    if split in ADDPRIM:
        prim = ADDPRIM[split]
        held = {p for p in grammar.phrases if p == prim or p.startswith(prim + " ")}
        if prim == "turn left":
            held = {prim}
        with_prim = [c for c in commands if _phrase_in(c, held)]
        others = [c for c in commands if not _phrase_in(c, held)]
        n_rep = round(len(others) * prim_share / (1 - prim_share))
        return others + [prim] * n_rep, [c for c in with_prim if c != prim]
    if split in (*TEMPLATE_FORM, "jump_around_right"):
        held, left_out = _template_phrases(split, grammar)
        pool = [c for c in commands if not _phrase_in(c, left_out)]
        test = [c for c in pool if _phrase_in(c, held)]
        return [c for c in pool if not _phrase_in(c, held)], test
    raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
