"""SCAN as in-context episodes: demonstrations, then a query, with the action tokens permuted.

ICL-forcing of Han & Padó (2024, catalogue #57): a causal transformer trained on sequences of
(command, actions) pairs whose action tokens are relabelled by a random permutation per sequence
cannot memorise what a word means and must read it from the earlier pairs: in-context learning as
an inductive bias for compositional generalization.

An episode is ``n_demos`` demonstrations ``words BOS actions EOS`` (commands with at most
``demo_max_actions`` actions, from the training commands of the SCAN ``split``), chosen so that
every primitive and direction word of the query appears in some demonstration, then the query's
words and (in the shared layout, ``seq2seq_common``) ``BOS``, its actions and ``EOS``. Training
rows score every demonstration's actions and the query's; ``val/main`` (training commands) and
``test/<split>`` score the query only and use the true action tokens. ``permute=False`` keeps the
true tokens in training too: in-context data without the forcing, a control. Read as one causal
sequence, so the model is the decoder-only ``transformer``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from genlab.data import Split, TaskData
from genlab.losses import IGNORE
from genlab.registry import Params
from genlab.tasks import TASKS
from genlab.tasks.scan_grammar import DIRECTIONS, Grammar, interpret
from genlab.tasks.scan_splits import ADDPRIM, split_commands
from genlab.tasks.seq2seq_common import BOS, EOS, FIRST, pack_pairs, seq2seq_info


class ScanICLParams(Params):
    """Params of ``scan_icl``."""

    split: Literal["addprim_jump", "jump_around_right", "around_right", "opposite_right"] = Field(
        "addprim_jump", description="the SCAN split whose training commands are used"
    )
    n_demos: int = Field(8, ge=1, le=32, description="demonstrations per episode")
    demo_max_actions: int = Field(8, ge=1, le=48, description="longest demonstration")
    permute: bool = Field(True, description="relabel the action tokens per training episode")
    permute_turns: bool = Field(True, description="relabel the turn actions too (else only U)")
    n_train: int = Field(20_000, ge=1, description="training episodes")
    n_val: int = Field(300, ge=0)
    n_test: int = Field(1000, ge=1)

    @model_validator(mode="after")
    def _check(self) -> ScanICLParams:
        if self.demo_max_actions < 2:
            raise ValueError("demo_max_actions: directions need demonstrations of >= 2 actions")
        return self


class Episodes:
    """Builds episodes (prompt, its targets, the answer) from a pool of demonstrations."""

    def __init__(self, p: ScanICLParams, grammar: Grammar, demos: list[str]) -> None:
        self.p = p
        self.vocab = {t: FIRST + i for i, t in enumerate((*grammar.words, *grammar.actions))}
        turns = () if p.permute_turns else ("I_TURN_LEFT", "I_TURN_RIGHT")
        self.actions = np.array([self.vocab[a] for a in grammar.actions if a not in turns])
        self.demos = demos
        self.by_word: dict[str, list[int]] = {}
        for i, c in enumerate(demos):
            for w in set(c.split()):
                self.by_word.setdefault(w, []).append(i)
        self.content = set(grammar.primitives) | set(DIRECTIONS)
        self.tgt_len = 2 * max(len(interpret(s)) for s in grammar.sentences) + 1

    def pick(self, query: str, rng: np.random.Generator) -> list[int]:
        """Demonstrations covering the query's primitive and direction words, then random ones."""
        chosen: list[int] = []
        for w in sorted(self.content & set(query.split())):
            if w not in self.by_word:
                raise ValueError(f"split: no demonstration shows {w!r}; raise demo_max_actions")
            if not any(w in self.demos[i].split() for i in chosen):
                chosen.append(int(rng.choice(self.by_word[w])))
        while len(chosen) < self.p.n_demos:
            chosen.append(int(rng.integers(len(self.demos))))
        rng.shuffle(chosen)
        return chosen

    def row(
        self, query: str, rng: np.random.Generator, permute: bool, score_demos: bool
    ) -> tuple[list[int], list[int], list[int]]:
        """(prompt tokens, their next-token targets, the query's answer)."""
        labels = rng.permutation(self.actions) if permute else self.actions
        relabel = dict(zip(self.actions.tolist(), labels.tolist(), strict=True))
        relabel.update({t: t for t in self.vocab.values() if t not in relabel})
        x: list[int] = []
        y: list[int] = []
        for i in self.pick(query, rng):
            words = [self.vocab[w] for w in self.demos[i].split()]
            acts = [relabel[self.vocab[a]] for a in interpret(self.demos[i])]
            x += words + [BOS] + acts + [EOS]
            scored = acts + [EOS] if score_demos else [IGNORE] * (len(acts) + 1)
            y += [IGNORE] * len(words) + scored + [IGNORE]  # BOS predicts a1, ..., a_m EOS
        words = [self.vocab[w] for w in query.split()]
        answer = [relabel[self.vocab[a]] for a in interpret(query)]
        return x + words, y + [IGNORE] * len(words), answer

    def rows(
        self, queries: list[str], rng: np.random.Generator, permute: bool, score_demos: bool
    ) -> list[tuple[list[int], list[int], list[int]]]:
        return [self.row(q, rng, permute, score_demos) for q in queries]


def pack(rows: list, src_len: int, tgt_len: int, meta: dict) -> Split:
    """Episodes in the shared layout, the prompt left-padded to ``src_len``."""
    src, ysrc, answers = zip(*rows, strict=True)
    return pack_pairs(src, answers, src_len, tgt_len, meta, source_targets=ysrc)


@TASKS.register(
    "scan_icl",
    ScanICLParams,
    papers=(57,),
    family="compositional",
    tiny={"n_demos": 2, "n_train": 300, "n_val": 30, "n_test": 50},
)
def scan_icl(params: ScanICLParams, data_seed: int) -> TaskData:
    """SCAN episodes of demonstrations and a query, action tokens permuted (Han & Padó, #57)."""
    grammar = Grammar()
    rng = np.random.default_rng(data_seed)
    train, test = split_commands(params.split, grammar, rng)
    train = sorted(set(train))  # the bare primitive's repetitions are one command here
    demos = [c for c in train if len(interpret(c)) <= params.demo_max_actions]
    ep = Episodes(params, grammar, demos)
    if params.split in ADDPRIM:  # the bare primitive is a query too, as often as in SCAN
        train += [ADDPRIM[params.split]] * round(len(train) / 9)

    def queries(pool: list[str], n: int) -> list[str]:
        return [pool[i] for i in rng.integers(0, len(pool), n)]

    pick = rng.permutation(len(test))[: params.n_test]
    rows = {
        "train": ep.rows(queries(train, params.n_train), rng, params.permute, True),
        "val": ep.rows(queries(train, params.n_val), rng, False, False),
        "test": ep.rows([test[i] for i in pick], rng, False, False),
    }
    src_len = max(len(r[0]) for part in rows.values() for r in part)
    meta = {"split": params.split}
    val = {"main": pack(rows["val"], src_len, ep.tgt_len, meta)} if params.n_val else {}
    test_split = pack(rows["test"], src_len, ep.tgt_len, {**meta, "shift": params.split})
    info = seq2seq_info(len(ep.vocab) + FIRST, src_len, ep.tgt_len, chance=0.0)
    return TaskData(
        {"main": pack(rows["train"], src_len, ep.tgt_len, meta)},
        val,
        {params.split: test_split},
        info,
    )
