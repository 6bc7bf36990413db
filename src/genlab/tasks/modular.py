"""Binary operations modulo a prime, the grokking task of Power et al. (2022), catalogue #55.

Every pair ``(a, b)`` becomes the token sequence ``[a, b, =]`` labelled ``a ∘ b mod p``. A fraction of
the table, drawn by ``data_seed`` alone, is the training set; the rest is the held-out test split.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import torch
from pydantic import Field, model_validator

from genlab.registry import Params
from genlab.tasks import TASKS
from genlab.tasks.base import Split, TaskData, TaskInfo

Operation = Literal[
    "add", "sub", "mul", "div", "div_odd_else_sub", "x2_y2", "x2_xy_y2", "x3_xy", "x3_xy2_y"
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
}
NEEDS_PRIME = {"div", "div_odd_else_sub"}  # b must have an inverse mod p


def is_prime(n: int) -> bool:
    return n >= 2 and all(n % k for k in range(2, int(n**0.5) + 1))


class ModularParams(Params):
    """Params of ``modular_arithmetic``."""

    p: int = Field(97, ge=2, le=1000, description="modulus")
    operation: Operation = Field("add", description="the binary operation")
    train_fraction: float = Field(
        0.5, gt=0, le=1, description="share of the table used for training, in (0, 1]"
    )

    @model_validator(mode="after")
    def _prime_when_needed(self) -> ModularParams:
        if self.operation in NEEDS_PRIME and not is_prime(self.p):
            raise ValueError(f"p must be prime for operation {self.operation!r}, got {self.p}")
        return self


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
