"""SCAN (Lake & Baroni 2018), generated offline from its grammar, with its standard splits.

The task behind the compositional claims of catalogue #54, #57 and #63. Rows use the shared
source -> target layout (``seq2seq_common``): the command (left-padded) then ``BOS`` and the
actions, scored on every action and the final ``EOS``, so per-row accuracy is exact match.

Splits (``split``): ``simple``, ``length``, ``addprim_jump``, ``addprim_turn_left`` and the
template splits ``jump_around_right``, ``around_right``, ``opposite_right``, ``right`` (sizes and
definitions in ``scan_splits``). ``val/main`` holds ``n_val`` training commands out of training (an
in-distribution check that the model fits); ``test/<split>`` is the shifted split.

Knobs of Zhou, Jiang & Bansal (#54): ``n_primitives`` (SCAN has 4; more add ``p5``, ``p6``, ...),
``templates`` (the phrase forms kept), ``n_train`` (a fixed number of training rows) and
``repeat`` (each distinct training command appears ``repeat`` times, so ``n_train / repeat``
distinct commands).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from genlab.data import Split, TaskData
from genlab.registry import Params
from genlab.tasks import TASKS
from genlab.tasks.scan_grammar import TEMPLATES, Grammar, interpret
from genlab.tasks.scan_splits import ADDPRIM, SPLITS, required_templates, split_commands
from genlab.tasks.seq2seq_common import FIRST, pack_pairs, seq2seq_info

SplitName = Literal[
    "simple",
    "length",
    "addprim_jump",
    "addprim_turn_left",
    "jump_around_right",
    "around_right",
    "opposite_right",
    "right",
]
Template = Literal["plain", "direction", "opposite", "around"]
MAX_COMMANDS = 1_000_000  # every command is enumerated: 32 primitives with every form make 952k


class ScanParams(Params):
    """Params of ``scan``."""

    split: SplitName = Field("simple", description=f"one of {', '.join(SPLITS)}")
    n_val: int = Field(500, ge=0, description="training commands held out as val/main")
    n_train: int | None = Field(None, ge=1, description="training rows (default: all)")
    repeat: int = Field(1, ge=1, description="times each distinct training command appears")
    n_test: int | None = Field(None, ge=1, description="test rows, a random subset (default all)")
    n_primitives: int = Field(4, ge=1, le=64, description="primitives (#54): 4 is SCAN's")
    templates: tuple[Template, ...] = Field(TEMPLATES, min_length=1, description="phrase forms")
    prim_share: float = Field(0.1, gt=0, lt=1, description="addprim: share of the bare primitive")

    @model_validator(mode="after")
    def _check(self) -> ScanParams:
        missing = required_templates(self.split) - set(self.templates)
        if missing:
            raise ValueError(
                f"templates: split {self.split} needs the forms {sorted(missing)}, "
                f"got {list(self.templates)}"
            )
        if self.split == "addprim_jump" and self.n_primitives < 4:
            raise ValueError("n_primitives: addprim_jump needs 'jump', the 4th primitive (>= 4)")
        n = self.grammar().n_commands
        if n > MAX_COMMANDS:
            raise ValueError(
                f"n_primitives: {self.n_primitives} primitives with the forms "
                f"{list(self.templates)} make {n:,} commands, more than {MAX_COMMANDS:,} "
                "(fewer primitives or fewer templates)"
            )
        if self.n_train is not None and self.n_train < self.repeat:
            raise ValueError(f"n_train ({self.n_train}) must be >= repeat ({self.repeat})")
        return self

    def grammar(self) -> Grammar:
        return Grammar(n_primitives=self.n_primitives, templates=tuple(self.templates))


def _check_seen(train: list[str], tests: dict[str, list[str]], field: str) -> None:
    """Every word and action of a test command must occur in training (else a primitive is
    unseen where it must be seen, and the split measures nothing compositional)."""
    words = {w for c in train for w in c.split()}
    acts = {a for c in train for a in interpret(c)}
    for name, cmds in tests.items():
        unseen = sorted({w for c in cmds for w in c.split()} - words)
        unseen += sorted({a for c in cmds for a in interpret(c)} - acts)
        if unseen:
            raise ValueError(
                f"{field}: the {name} commands use {unseen}, never seen in training; "
                "keep more training commands"
            )


def _subsample(cmds: list[str], n: int | None, rng: np.random.Generator) -> list[str]:
    if n is None or n >= len(cmds):
        return cmds
    return [cmds[i] for i in sorted(rng.choice(len(cmds), size=n, replace=False))]


@TASKS.register(
    "scan",
    ScanParams,
    papers=(54, 57, 63),
    family="compositional",
    tiny={"n_val": 50, "n_train": 1000, "n_test": 200},
)
def scan(params: ScanParams, data_seed: int) -> TaskData:
    """SCAN commands -> action sequences, standard splits (Lake & Baroni 2018; #54, #57, #63)."""
    grammar = params.grammar()
    rng = np.random.default_rng(data_seed)
    train, test = split_commands(params.split, grammar, rng, params.prim_share)
    if not test:
        raise ValueError(f"split: {params.split} leaves no test commands with these templates")
    prim = ADDPRIM.get(params.split)
    distinct = [c for c in train if c != prim]
    perm = rng.permutation(len(distinct))
    distinct = [distinct[i] for i in perm]
    val, distinct = distinct[: params.n_val], distinct[params.n_val :]
    if not distinct:
        raise ValueError(f"n_val: {params.n_val} leaves no training commands")
    if params.n_train is not None:  # a fixed number of rows: n_train / repeat distinct commands
        distinct = _subsample(distinct, params.n_train // params.repeat, rng)
    rows = [c for c in distinct for _ in range(params.repeat)]
    if prim is not None:  # the bare primitive, repeated to its share of the training rows
        rows += [prim] * round(len(rows) * params.prim_share / (1 - params.prim_share))
    test = _subsample(test, params.n_test, rng)
    _check_seen(rows, {"test": test}, "n_train" if params.n_train else "split")

    vocab = {t: FIRST + i for i, t in enumerate((*grammar.words, *grammar.actions))}
    longest = max(grammar.sentences, key=lambda c: len(interpret(c)))  # widths fit any command
    src_len = 2 * max(len(c.split()) for c in grammar.sentences) + 1
    tgt_len = 2 * len(interpret(longest)) + 1

    def encode(cmds: list[str], meta: dict) -> Split:
        src = [[vocab[w] for w in c.split()] for c in cmds]
        tgt = [[vocab[a] for a in interpret(c)] for c in cmds]
        return pack_pairs(src, tgt, src_len, tgt_len, meta)

    meta = {"split": params.split}
    info = seq2seq_info(
        len(vocab) + FIRST,
        src_len,
        tgt_len,
        chance=0.0,
        vocab=list(vocab),
        n_actions=len(grammar.actions),
    )
    return TaskData(
        train={"main": encode(rows, meta)},
        val={"main": encode(val, meta)} if val else {},
        test={params.split: encode(test, {**meta, "shift": params.split})},
        info=info,
    )
