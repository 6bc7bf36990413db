"""gCOG-lite: a symbolic grid of coloured shapes and an instruction tree to answer about it.

A reduced generator after Ito et al., "gCOG" (ICLR 2024, catalogue #41). A ``grid x grid`` board
holds objects of distinct shapes and distinct colours (``n_shapes``, ``n_colors``). Instructions
are trees in prefix notation: ``EXIST s c`` (yes/no), ``COLOR s`` (the colour of the shape),
``SHAPE c`` (the shape of the colour), and ``IF cond then else`` whose condition is an ``EXIST``
and whose branches are instructions. Three out-of-distribution tests, as in the paper:

- ``test/distractor``: the training tasks on boards with ``distractor_objects`` objects (training
  boards have ``1..train_objects``; ``distractor_objects <= train_objects`` is no shift, and 1 no
  distractor at all);
- ``test/systematic``: depth-2 trees ``IF EXIST (then) (else)`` with the branch pair
  (``SHAPE``, ``COLOR``), which training never has (it has the other three pairs);
- ``test/productive``: depth-3 trees (training has depth 1 and 2, unless ``train_depth = 3``).

Rows use the source -> target layout: the board (one token per cell: empty, or shape x colour),
then ``BOS`` and the instruction; only the position of the last instruction token is scored, with
the answer (yes, no, a colour or a shape), so models read it as a question about the board: the
decoder-only ``transformer`` (single stream), ``seq2seq_transformer`` (instruction cross-attends
to the board) or ``seq2seq_rnn``.
"""

from __future__ import annotations

import numpy as np
import torch
from pydantic import Field, model_validator

from genlab.data import Split, TaskData
from genlab.losses import IGNORE
from genlab.registry import Params
from genlab.tasks import TASKS
from genlab.tasks.seq2seq_common import BOS, FIRST, PAD, seq2seq_info

OPS = ("IF", "EXIST", "COLOR", "SHAPE")


class GCogParams(Params):
    """Params of ``gcog``."""

    grid: int = Field(5, ge=2, le=10)
    n_shapes: int = Field(6, ge=2, le=16)
    n_colors: int = Field(6, ge=2, le=16)
    train_objects: int = Field(3, ge=1, description="training boards hold 1..this many objects")
    distractor_objects: int = Field(6, ge=1)
    # 3: the productive split is no longer a shift (a control)
    train_depth: int = Field(2, ge=1, le=3, description="training trees of depth 1..this")
    quiet_defaults = {"train_depth": 2}  # depth-2 training keeps its run ids
    n_train: int = Field(20_000, ge=1)
    n_val: int = Field(500, ge=0)
    n_test: int = Field(500, ge=1, description="rows per test split")

    @model_validator(mode="after")
    def _check(self) -> GCogParams:
        most = max(self.train_objects, self.distractor_objects)
        if most > min(self.n_shapes, self.n_colors, self.grid**2):
            raise ValueError(
                f"distractor_objects: {most} objects need as many distinct shapes, colours, cells"
            )
        return self


class Vocab:
    def __init__(self, p: GCogParams) -> None:
        self.p = p
        self.cell0 = FIRST  # empty cell, then shape * n_colors + colour
        self.op0 = self.cell0 + 1 + p.n_shapes * p.n_colors
        self.shape0 = self.op0 + len(OPS)
        self.color0 = self.shape0 + p.n_shapes
        self.yes, self.no = self.color0 + p.n_colors, self.color0 + p.n_colors + 1
        self.size = self.no + 1


def _board(p: GCogParams, n_obj: int, rng: np.random.Generator) -> dict[int, int]:
    """shape -> colour of the objects on the board (distinct shapes and colours)."""
    shapes = rng.choice(p.n_shapes, n_obj, replace=False)
    colors = rng.choice(p.n_colors, n_obj, replace=False)
    return dict(zip(shapes.tolist(), colors.tolist(), strict=True))


def _query(kind: str, board: dict, v: Vocab, rng: np.random.Generator) -> tuple[list[int], int]:
    """(tokens, answer) of a leaf instruction about ``board``."""
    s = int(rng.choice(list(board)))
    if kind == "COLOR":
        return [v.op0 + 2, v.shape0 + s], v.color0 + board[s]
    if kind == "SHAPE":
        return [v.op0 + 3, v.color0 + board[s]], v.shape0 + s
    if rng.random() < 0.5:  # EXIST, half the time about an object that is there
        return [v.op0 + 1, v.shape0 + s, v.color0 + board[s]], v.yes
    while True:
        s2, c2 = int(rng.integers(v.p.n_shapes)), int(rng.integers(v.p.n_colors))
        if board.get(s2) != c2:
            return [v.op0 + 1, v.shape0 + s2, v.color0 + c2], v.no


def _tree(depth: int, branches: tuple[str, str] | None, board, v, rng):  # noqa: ANN001, ANN202
    """(tokens, answer) of a tree of ``depth`` (1: a leaf of any kind)."""
    if depth == 1:
        return _query(str(rng.choice(["EXIST", "COLOR", "SHAPE"])), board, v, rng)
    cond, truth = _query("EXIST", board, v, rng)
    if depth == 2:
        a, b = branches or (
            str(rng.choice(["COLOR", "SHAPE"])),
            str(rng.choice(["COLOR", "SHAPE"])),
        )
        (ta, ya), (tb, yb) = _query(a, board, v, rng), _query(b, board, v, rng)
    else:
        (ta, ya), (tb, yb) = (
            _tree(depth - 1, None, board, v, rng),
            _tree(depth - 1, None, board, v, rng),
        )
    return [v.op0] + cond + ta + tb, ya if truth == v.yes else yb


@TASKS.register(
    "gcog",
    GCogParams,
    papers=(41,),
    family="compositional",
    tiny={"n_train": 500, "n_val": 50, "n_test": 50},
)
def gcog(params: GCogParams, data_seed: int) -> TaskData:
    """Boards of coloured shapes and instruction trees; distractor, systematic and productive
    splits (Ito et al., gCOG, #41)."""
    rng = np.random.default_rng(data_seed)
    v = Vocab(params)
    cells = params.grid**2
    held_pair = ("SHAPE", "COLOR")
    train_pairs = [("COLOR", "COLOR"), ("COLOR", "SHAPE"), ("SHAPE", "SHAPE")]

    def example(n_obj: int, depth: int, pair) -> tuple[list[int], list[int], int]:  # noqa: ANN001
        board = _board(params, n_obj, rng)
        grid = [v.cell0] * cells
        for pos, (s, c) in zip(
            rng.choice(cells, len(board), replace=False), board.items(), strict=True
        ):
            grid[int(pos)] = v.cell0 + 1 + s * params.n_colors + c
        tokens, answer = _tree(depth, pair, board, v, rng)
        return grid, tokens, answer

    def train_draw():  # noqa: ANN202
        depth = int(rng.integers(1, params.train_depth + 1))
        pair = train_pairs[int(rng.integers(len(train_pairs)))] if depth == 2 else None
        return example(int(rng.integers(1, params.train_objects + 1)), depth, pair)

    def pack(rows: list, width: int, meta: dict) -> Split:
        x = torch.full((len(rows), width), PAD, dtype=torch.long)
        y = torch.full((len(rows), width), IGNORE, dtype=torch.long)
        for r, (grid, tokens, answer) in enumerate(rows):
            x[r, :cells] = torch.tensor(grid)
            x[r, cells] = BOS
            x[r, cells + 1 : cells + 1 + len(tokens)] = torch.tensor(tokens)
            y[r, cells + len(tokens)] = answer
        return Split(x, y, meta)

    n = params.n_test
    parts = {
        "train": [train_draw() for _ in range(params.n_train)],
        "val": [train_draw() for _ in range(params.n_val)],
        "distractor": [
            example(
                params.distractor_objects,
                int(rng.integers(1, 3)),
                train_pairs[int(rng.integers(3))],
            )
            for _ in range(n)
        ],
        "systematic": [
            example(int(rng.integers(1, params.train_objects + 1)), 2, held_pair) for _ in range(n)
        ],
        "productive": [
            example(int(rng.integers(1, params.train_objects + 1)), 3, None) for _ in range(n)
        ],
    }
    longest = max(len(t) for rows in parts.values() for _, t, _ in rows)
    splits = {k: pack(rows, cells + 1 + longest, {"shift": k}) for k, rows in parts.items()}
    info = seq2seq_info(
        v.size, cells, longest + 1, chance=1 / max(params.n_colors, params.n_shapes)
    )
    val = {"main": splits["val"]} if params.n_val else {}
    test = {k: splits[k] for k in ("distractor", "systematic", "productive")}
    return TaskData({"main": splits["train"]}, val, test, info)
