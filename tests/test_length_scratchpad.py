"""Task ``seq_parity`` (Anil et al., #46): targets and bad input. The claim ``length.scratchpad``
is judged in ``test_length_family_claims.py``."""

from __future__ import annotations

import pytest
import torch

from genlab.claims import CLAIMS
from genlab.errors import SpecError
from genlab.losses import IGNORE
from genlab.spec import parse_spec
from genlab.tasks import TASKS
from genlab.tasks.seq_parity import BIT, EOS, EQ, example

CLAIM = CLAIMS.get("length.scratchpad").obj


def build(**params):  # noqa: ANN201
    entry = TASKS.get("seq_parity")
    return entry.obj(entry.params(**params), 0)


@pytest.mark.parametrize("fmt", ["direct", "scratchpad"])
def test_targets_are_next_tokens_and_the_answer_is_the_parity(fmt) -> None:
    data = build(format=fmt, train_length=6, test_max=9, n_train=50, n_val=0, n_test=20)
    for split in data.splits().values():
        for x, y in zip(split.x, split.y, strict=True):
            scored = (y != IGNORE).nonzero().flatten()
            n_bits = int(((x >= BIT) & (torch.arange(len(x)) < (x == 2).nonzero()[0, 0])).sum())
            assert torch.equal(y[scored[:-1]], x[scored[:-1] + 1])  # teacher forcing
            assert y[scored[-1]] == EOS
            answer = y[scored[-2]] - BIT
            assert answer == int((x[:n_bits] - BIT).sum()) % 2
            assert len(scored) == (2 if fmt == "direct" else 2 * n_bits + 3)


def test_scratchpad_writes_each_bit_then_the_running_parity() -> None:
    x, y = example([1, 1, 0], "scratchpad")
    steps = [BIT + 1, BIT + 1, BIT + 1, BIT + 0, BIT + 0, BIT + 0]
    assert x == [BIT + 1, BIT + 1, BIT + 0, 2, *steps, EQ, BIT + 0]
    assert y == [IGNORE] * 3 + steps + [EQ, BIT + 0, EOS]


@pytest.mark.parametrize(
    ("params", "field"),
    [({"train_length": 8, "test_min": 8}, "test_min"), ({"format": "chain"}, "format")],
)
def test_bad_params_are_spec_errors(params, field) -> None:
    with pytest.raises(SpecError, match=field):
        parse_spec(
            {
                "task": {"name": "seq_parity", "params": params},
                "model": {"name": "transformer"},
                "steps": 10,
            }
        )
