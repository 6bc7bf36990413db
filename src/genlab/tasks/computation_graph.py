"""Modular arithmetic over random computational graphs, split by graph depth (Altabaa et al.,
"Recursive latent-space reasoning for OOD algorithmic generalization", catalogue #58).

A program over ``Z_p`` is a list of definitions in an order that respects dependencies: ``n_leaves``
leaf assignments ``c = v`` (a constant) and, for each level ``k = 1..depth``, ``width`` operations
``u op w = v`` with ``op`` in ``ops``, one operand from level ``k - 1`` and the other from any
earlier level (in random order). A leaf has depth 0, an operation ``1 + max`` of its operands'
depths, and the program's depth (its longest dependency chain) is ``depth``, the "length" of the
split machinery (``seq_common``): training depths are uniform in ``1..train_length``, test splits
hold one depth each above it. The graph size is bounded (``n_leaves + width * depth`` definitions),
so the sequence grows linearly with depth. The definitions come in a random topological order
(a random ready definition next), and variable names are distinct symbols drawn from a pool of
``n_names``.

Each definition is written with the defined name LAST (``u op w = v``, ``c = v``), and the token
``v`` that ends the definition is scored with the value of ``v`` mod ``p`` (a label per position;
the value is never written into the input). Every variable is scored, so the sequence exact match
(``accuracy``) means every intermediate value right, the deepest included. Writing the name last
puts the name and its value at one position, where a later use of the name can look it up.

Tokens: ``PAD`` 0, ``BLANK`` 1 (never in the input: the per-loop loss's target for a value
not yet reached), ``=`` 2, ops ``+ - *`` 3-5, values ``0..p-1`` from 6,
names after the values. ``TaskInfo.extra`` holds ``max_length``, ``train_length`` (the training
depth), ``first_symbol`` (the first value token) and ``step_tokens`` (the op tokens: one per
operation definition, which ``looped_transformer`` counts to set its number of loops) and
``max_steps`` (the most operations in one program), ``blank`` (``BLANK``) and
``position_depths``, a function from a batch of token rows to each scored position's graph depth
(``-1`` elsewhere), parsed from the tokens alone: the hook a per-loop loss (``methods/per_loop.py``)
reads to supervise each variable at the loop its depth is reached, as the authors' code does.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Literal

import numpy as np
import torch
from pydantic import Field, model_validator
from torch import Tensor

from genlab.data import Split, TaskData, TaskInfo
from genlab.losses import IGNORE
from genlab.tasks import TASKS
from genlab.tasks.seq_common import BLANK, TINY, LengthParams, length_splits, pack

EQ, FIRST_OP = 2, 3
OPS: dict[str, int] = {"+": 0, "-": 1, "*": 2}
FIRST_VALUE = FIRST_OP + len(OPS)
Op = Literal["+", "-", "*"]


class ComputationGraphParams(LengthParams):
    """Params of ``computation_graph`` (``train_length``/``test_*`` are graph depths)."""

    p: int = Field(23, ge=2, le=1000, description="modulus; values are 0..p-1")
    ops: list[Op] = Field(default_factory=lambda: ["+", "-", "*"], min_length=1)
    n_leaves: int = Field(4, ge=2, le=100, description="leaf assignments per program")
    width: int = Field(2, ge=1, le=20, description="operation definitions per depth level")
    n_names: int = Field(32, ge=2, le=1000, description="pool of variable-name symbols")
    train_length: int = Field(4, ge=1, le=200, description="deepest training graph")
    test_max: int = Field(8, ge=2, le=200, description="deepest test graph")
    n_train: int = Field(5000, ge=1)

    @model_validator(mode="after")
    def _check(self) -> ComputationGraphParams:
        need = self.n_leaves + self.width * self.test_max
        if self.n_names < need:
            raise ValueError(
                f"n_names ({self.n_names}) must be >= n_leaves + width * test_max ({need}): "
                "every variable of a program needs its own name"
            )
        if len(set(self.ops)) != len(self.ops):
            raise ValueError(f"ops must not repeat, got {self.ops}")
        return self


@dataclass(frozen=True)
class Node:
    """One definition: a leaf (``op`` None, ``value`` its constant) or ``args[0] op args[1]``."""

    op: str | None
    args: tuple[int, ...]
    value: int
    depth: int


def random_graph(rng: np.random.Generator, p: ComputationGraphParams, depth: int) -> list[Node]:
    """Nodes of one program of exactly ``depth`` (leaves first, then level by level)."""
    nodes = [Node(None, (), int(v), 0) for v in rng.integers(p.p, size=p.n_leaves)]
    prev = list(range(p.n_leaves))
    for _ in range(depth):
        level = []
        for _ in range(p.width):
            deep = prev[int(rng.integers(len(prev)))]
            other = int(rng.integers(len(nodes) - len(level)))  # any node below this level
            args = (deep, other) if rng.random() < 0.5 else (other, deep)
            op = p.ops[int(rng.integers(len(p.ops)))]
            a, b = nodes[args[0]].value, nodes[args[1]].value
            value = (a + b if op == "+" else a - b if op == "-" else a * b) % p.p
            level.append(Node(op, args, value, 1 + max(nodes[i].depth for i in args)))
        nodes += level
        prev = list(range(len(nodes) - p.width, len(nodes)))
    return nodes


def topological_order(rng: np.random.Generator, nodes: list[Node]) -> list[int]:
    """A random order in which every node comes after its operands (a random ready node next)."""
    done: set[int] = set()
    order: list[int] = []
    while len(order) < len(nodes):
        ready = [i for i, n in enumerate(nodes) if i not in done and set(n.args) <= done]
        pick = ready[int(rng.integers(len(ready)))]
        done.add(pick)
        order.append(pick)
    return order


def render(
    nodes: list[Node], order: list[int], names: list[int], p: int
) -> tuple[list[int], list[int]]:
    """Tokens and targets: ``c = v`` / ``u op w = v``, the value of ``v`` scored at ``v``."""
    name_tok = FIRST_VALUE + p
    x: list[int] = []
    y: list[int] = []
    for i in order:
        n = nodes[i]
        if n.op is None:
            body = [FIRST_VALUE + n.value]
        else:
            u, w = (name_tok + names[a] for a in n.args)
            body = [u, FIRST_OP + OPS[n.op], w]
        x += [*body, EQ, name_tok + names[i]]
        y += [IGNORE] * (len(body) + 1) + [FIRST_VALUE + n.value]
    return x, y


def example(
    rng: np.random.Generator, p: ComputationGraphParams, depth: int
) -> tuple[list[int], list[int]]:
    """One random program of ``depth``: its tokens and targets."""
    nodes = random_graph(rng, p, depth)
    order = topological_order(rng, nodes)
    names = rng.choice(p.n_names, size=len(nodes), replace=False).tolist()
    return render(nodes, order, names, p.p)


def position_depths(x: Tensor, first_name: int) -> Tensor:
    """Graph depth of the variable defined at each position of token rows ``x`` (its name, after
    ``=``; names are tokens ``>= first_name``), ``-1`` at every other position: a leaf ``c = v`` is
    0, ``u op w = v`` is ``1 + max`` of its operands' depths. One pass over the positions, batched
    over rows (the definitions come in dependency order)."""
    b, t = x.shape
    out = torch.full((b, t), -1, dtype=torch.long, device=x.device)
    n_names = int(x.max().item()) - first_name + 1 if x.numel() else 0
    if n_names <= 0:
        return out
    table = torch.zeros((b, n_names), dtype=torch.long, device=x.device)  # depth by name
    rows = torch.arange(b, device=x.device)
    for i in range(2, t):
        defined = (x[:, i - 1] == EQ) & (x[:, i] >= first_name)
        if not bool(defined.any()):
            continue
        depth = torch.zeros(b, dtype=torch.long, device=x.device)
        if i >= 4:
            op = (x[:, i - 3] >= FIRST_OP) & (x[:, i - 3] < FIRST_VALUE) & defined
            u = (x[:, i - 4] - first_name).clamp(min=0)
            w = (x[:, i - 2] - first_name).clamp(min=0)
            deeper = 1 + torch.maximum(table[rows, u], table[rows, w])
            depth = torch.where(op, deeper, depth)
        name = (x[:, i] - first_name).clamp(min=0)
        table[rows[defined], name[defined]] = depth[defined]
        out[:, i] = torch.where(defined, depth, out[:, i])
    return out


def _split(
    p: ComputationGraphParams, rng: np.random.Generator, depths: np.ndarray, meta: dict
) -> Split:
    rows = [example(rng, p, int(d)) for d in depths]
    return pack([r[0] for r in rows], [r[1] for r in rows], meta)


@TASKS.register(
    "computation_graph", ComputationGraphParams, papers=(58,), family="length", tiny=TINY
)
def computation_graph(params: ComputationGraphParams, data_seed: int) -> TaskData:
    """Values of every variable of a random program over Z_p, by graph depth (Altabaa et al., #58)."""
    rng = np.random.default_rng(data_seed)
    meta = {"p": params.p, "width": params.width, "n_leaves": params.n_leaves}
    train, val, test = length_splits(
        params, rng, lambda depths, m: _split(params, rng, depths, m), meta
    )
    longest = max(s.x.shape[1] for s in [*train.values(), *test.values()])
    n_tokens = FIRST_VALUE + params.p + params.n_names
    info = TaskInfo(
        kind="sequence",
        n_outputs=n_tokens,
        vocab_size=n_tokens,
        seq_len=train["main"].x.shape[1],
        chance=1.0 / params.p,
        extra={
            "max_length": longest,
            "train_length": params.train_length,
            "first_symbol": FIRST_VALUE,
            "step_tokens": [FIRST_OP + OPS[o] for o in OPS],
            "max_steps": params.width * params.test_max,
            "blank": BLANK,
            "position_depths": partial(position_depths, first_name=FIRST_VALUE + params.p),
        },
    )
    return TaskData(train=train, val=val, test=test, info=info)
