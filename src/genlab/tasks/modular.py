"""Binary operations modulo a prime, the grokking task of Power et al. (2022), catalogue #55.

Every pair ``(a, b)`` becomes the token sequence ``[a, b, =]`` labelled ``a ∘ b mod p``. A fraction of
the table, drawn by ``data_seed`` alone, is the training set; the rest is the held-out test split.

``split`` decides what is drawn. ``random`` draws ordered pairs, as Power et al.'s code does: for a
commutative operation about half the test pairs then have their transpose ``(b, a)`` in training,
and a model that is nearly symmetric in its two operands answers those from memory (measured on the
``grokking`` preset: test accuracy 0.50 at train fit, 0.99 on transposed pairs, 0.003 on the rest).
``unordered`` draws unordered pairs ``{a, b}``, so a pair and its transpose are always on the same
side: the held-out part of the table cannot be looked up. ``auto`` (the default) is ``unordered``
for commutative operations and ``random`` otherwise; ask for ``random`` to reproduce the leak.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import torch
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.tasks import TASKS

Operation = Literal[
    "add",
    "sub",
    "mul",
    "div",
    "div_odd_else_sub",
    "x2_y2",
    "x2_xy_y2",
    "x3_xy",
    "x3_xy2_y",
    "random",
]


def _inverse(b: torch.Tensor, p: int) -> torch.Tensor:
    """Multiplicative inverses mod a prime ``p`` (0 maps to 0; callers drop ``b = 0``)."""
    return torch.tensor([pow(v, -1, p) if v else 0 for v in range(p)])[b]


OPERATIONS: dict[str, Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor]] = {
    "add": lambda a, b, p: a + b,
    "sub": lambda a, b, p: a - b,
    "mul": lambda a, b, p: a * b,
    "div": lambda a, b, p: a * _inverse(b, p),
    "div_odd_else_sub": lambda a, b, p: torch.where(b % 2 == 1, a * _inverse(b, p), a - b),
    "x2_y2": lambda a, b, p: a * a + b * b,
    "x2_xy_y2": lambda a, b, p: a * a + a * b + b * b,
    "x3_xy": lambda a, b, p: a**3 + a * b,
    "x3_xy2_y": lambda a, b, p: a**3 + a * b * b + b,
    # a fixed random table per p: no rule to find (the negative control of grokking claims)
    "random": lambda a, b, p: torch.randint(p, (p, p), generator=torch.Generator().manual_seed(p))[
        a, b
    ],
}
NEEDS_PRIME = {"div", "div_odd_else_sub"}  # b must have an inverse mod p
COMMUTATIVE = {"add", "mul", "x2_y2", "x2_xy_y2"}


def is_prime(n: int) -> bool:
    return n >= 2 and all(n % k for k in range(2, int(n**0.5) + 1))


class ModularParams(Params):
    """Params of ``modular_arithmetic``."""

    p: int = Field(97, ge=2, le=1000, description="modulus")
    operation: Operation = Field("add", description="the binary operation")
    train_fraction: float = Field(
        0.5, gt=0, le=1, description="share of the table used for training, in (0, 1]"
    )
    split: Literal["auto", "unordered", "random"] = Field(
        "auto",
        description="draw unordered pairs (a pair and its transpose on the same side) or ordered "
        "pairs at random (leaks transposes of commutative operations); auto: unordered for "
        "commutative operations",
    )

    @model_validator(mode="after")
    def _prime_when_needed(self) -> ModularParams:
        if self.operation in NEEDS_PRIME and not is_prime(self.p):
            raise ValueError(f"p must be prime for operation {self.operation!r}, got {self.p}")
        return self


def _split_unordered(a: torch.Tensor, b: torch.Tensor, p: int, fraction: float, gen):
    """Train/test indices drawing unordered pairs ``{a, b}`` in random order until the training
    set holds the number of ordered pairs nearest ``fraction`` of the table."""
    _, group = torch.unique(torch.minimum(a, b) * p + torch.maximum(a, b), return_inverse=True)
    rank = torch.randperm(int(group.max()) + 1, generator=gen)[group]  # each group's draw order
    order = torch.argsort(rank, stable=True)
    size = torch.bincount(rank)  # ordered pairs per group, in draw order
    k = int(torch.argmin((size.cumsum(0) - fraction * len(a)).abs())) + 1
    n_train = int(size[:k].sum())
    return order[:n_train], order[n_train:]


@TASKS.register(
    "modular_arithmetic",
    ModularParams,
    papers=(55, 107, 116, 20),
    family="grokking",
    tiny={"p": 11},
)
def modular_arithmetic(params: ModularParams, data_seed: int) -> TaskData:
    """The table of ``a ∘ b mod p`` as ``[a, b, =]`` token sequences (Power et al., #55); also the
    task of Liu et al.'s effective theory (#107), Varma et al.'s circuit efficiency (#116) and
    Prieto et al.'s softmax collapse (#20).

    Division and ``div_odd_else_sub`` drop ``b = 0`` (no inverse), as in the paper.
    """
    p = params.p
    a, b = torch.meshgrid(torch.arange(p), torch.arange(p), indexing="ij")
    a, b = a.reshape(-1), b.reshape(-1)
    if params.operation in NEEDS_PRIME:
        keep = b != 0
        a, b = a[keep], b[keep]
    y = OPERATIONS[params.operation](a, b, p) % p
    x = torch.stack([a, b, torch.full_like(a, p)], dim=1)

    gen = torch.Generator().manual_seed(data_seed)
    unordered = params.split == "unordered" or (
        params.split == "auto" and params.operation in COMMUTATIVE
    )
    if unordered:
        tr, te = _split_unordered(a, b, p, params.train_fraction, gen)
    else:
        order = torch.randperm(len(x), generator=gen)
        n_train = max(1, round(params.train_fraction * len(x)))
        tr, te = order[:n_train], order[n_train:]
    meta = {"p": p, "operation": params.operation}
    test = {"heldout": Split(x[te], y[te], meta)} if len(te) else {}
    return TaskData(
        train={"main": Split(x[tr], y[tr], meta)},
        val={},
        test=test,
        info=TaskInfo(
            kind="classification", n_outputs=p, vocab_size=p + 1, seq_len=3, chance=1.0 / p
        ),
    )
