"""``pcfg_lm``: character-level language modelling of a corpus generated from a toy PCFG.

For the ensembling claim of Herel & Mikolov ("Publish dev/test probabilities", catalogue #69), who
interpolate language models (n-gram, neural) with weights tuned on a dev set: sentences are drawn
from a small English-like probabilistic context-free grammar (noun and verb phrases, prepositional
attachment, sentential complements; recursion capped at ``max_depth``), joined with spaces into one
character stream, and cut into a train, a dev (``val/main``) and a test (``test/main``) stream of
``train_chars``, ``eval_chars`` and ``eval_chars`` characters. Each stream is split into
non-overlapping windows of ``seq_len``: the input is a window, the target the same window shifted
by one character (next-character prediction, ``kind = "sequence"``). ``meta["stream"]`` keeps each
split's whole stream for count-based models (``genlab.ensembles.kneser_ney``).
"""

from __future__ import annotations

import random

import torch
from pydantic import Field

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.tasks import TASKS

# nonterminal -> [(probability, expansion)], the first expansion of each is non-recursive
GRAMMAR: dict[str, list[tuple[float, list[str]]]] = {
    "S": [(0.85, ["NP", "VP"]), (0.15, ["NP", "VP", "and", "S"])],
    "NP": [(0.45, ["Det", "N"]), (0.2, ["Det", "Adj", "N"]), (0.1, ["Name"]), (0.25, ["NP", "PP"])],
    "VP": [
        (0.3, ["Vt", "NP"]),
        (0.2, ["Vi"]),
        (0.25, ["VP", "PP"]),
        (0.15, ["Vs", "that", "S"]),
        (0.1, ["Vt", "NP", "Adv"]),
    ],
    "PP": [(1.0, ["P", "NP"])],
    "Det": [(0.4, ["the"]), (0.25, ["a"]), (0.15, ["every"]), (0.2, ["some"])],
    "Adj": [(0.3, ["big"]), (0.2, ["small"]), (0.2, ["green"]), (0.15, ["old"]), (0.15, ["quiet"])],
    "N": [
        (0.15, ["cat"]),
        (0.15, ["dog"]),
        (0.12, ["man"]),
        (0.12, ["woman"]),
        (0.1, ["telescope"]),
        (0.1, ["park"]),
        (0.08, ["idea"]),
        (0.1, ["bird"]),
        (0.08, ["garden"]),
    ],
    "Name": [(0.4, ["alice"]), (0.35, ["bob"]), (0.25, ["carol"])],
    "Vt": [
        (0.3, ["saw"]),
        (0.2, ["liked"]),
        (0.2, ["chased"]),
        (0.15, ["found"]),
        (0.15, ["watched"]),
    ],
    "Vi": [(0.4, ["slept"]), (0.3, ["ran"]), (0.3, ["laughed"])],
    "Vs": [(0.5, ["thought"]), (0.3, ["said"]), (0.2, ["knew"])],
    "P": [(0.35, ["in"]), (0.3, ["with"]), (0.2, ["near"]), (0.15, ["under"])],
    "Adv": [(0.5, ["quickly"]), (0.5, ["again"])],
}


def sentence(rng: random.Random, max_depth: int) -> list[str]:
    """One sentence of words from ``GRAMMAR``; past ``max_depth`` a phrase takes its first
    (non-recursive) expansion, while words are still drawn."""

    def expand(symbol: str, depth: int) -> list[str]:
        if symbol not in GRAMMAR:
            return [symbol]
        rules = GRAMMAR[symbol]
        if depth >= max_depth and any(s in GRAMMAR for _, r in rules for s in r):
            rhs = rules[0][1]
        else:
            rhs = rng.choices([r for _, r in rules], weights=[w for w, _ in rules])[0]
        return [w for s in rhs for w in expand(s, depth + 1)]

    return expand("S", 0)


def alphabet() -> list[str]:
    words = {w for rules in GRAMMAR.values() for _, rhs in rules for w in rhs if w not in GRAMMAR}
    return sorted({c for w in words for c in w} | {" ", "."})


class PCFGParams(Params):
    """Params of ``pcfg_lm``."""

    seq_len: int = Field(64, ge=2, le=1024)
    train_chars: int = Field(40_000, ge=100, le=5_000_000)
    eval_chars: int = Field(8_000, ge=100, le=1_000_000)
    max_depth: int = Field(6, ge=1, le=30)


def corpus(n_chars: int, rng: random.Random, max_depth: int) -> str:
    parts, total = [], 0
    while total < n_chars:
        s = " ".join(sentence(rng, max_depth)) + ". "
        parts.append(s)
        total += len(s)
    return "".join(parts)[:n_chars]


@TASKS.register("pcfg_lm", PCFGParams, papers=(69,), family="ensembles")
def pcfg_lm(params: PCFGParams, data_seed: int) -> TaskData:
    """Next-character prediction on text drawn from a toy PCFG (#69)."""
    chars = alphabet()
    index = {c: i for i, c in enumerate(chars)}
    rng = random.Random(data_seed)
    t = params.seq_len

    def split(n: int) -> Split:
        n = max(n - (n - 1) % t, t + 1)  # whole windows plus the last target
        stream = torch.tensor([index[c] for c in corpus(n, rng, params.max_depth)])
        k = (len(stream) - 1) // t
        x = stream[: k * t].view(k, t)
        y = stream[1 : k * t + 1].view(k, t)
        return Split(x, y, {"stream": stream})

    return TaskData(
        train={"main": split(params.train_chars)},
        val={"main": split(params.eval_chars)},
        test={"main": split(params.eval_chars)},
        info=TaskInfo(
            kind="sequence",
            n_outputs=len(chars),
            vocab_size=len(chars),
            seq_len=t,
            chance=1 / len(chars),
            extra={"alphabet": "".join(chars)},
        ),
    )
