"""``factor_digits`` (#40): one factor at a time and in pairs, on clean training digits."""

from __future__ import annotations

import pytest
import torch

from genlab.tasks.factor_digits import FACTORS, FactorParams, apply, conditions, factor_digits


def test_conditions_are_singles_then_pairs():
    assert len(conditions(pairs=False)) == 5 and len(conditions(pairs=True)) == 15


@pytest.mark.parametrize("factor", FACTORS)
def test_each_factor_changes_images_and_zero_changes_nothing(factor):
    x = torch.rand(6, 1, 16, 16)
    gen = torch.Generator().manual_seed(0)
    assert not torch.allclose(apply(x, factor, 1.0, gen), x, atol=1e-3)
    assert torch.allclose(apply(x, factor, 0.0, gen), x, atol=1e-5)


def test_unknown_factor_is_named():
    with pytest.raises(ValueError, match="factor must be one of"):
        apply(torch.rand(2, 1, 16, 16), "blur", 1.0, torch.Generator())


def test_task_splits():
    data = factor_digits(FactorParams(), 0)
    assert set(data.test) == {"clean"} | {"+".join(c) for c in conditions(True)}
    clean, rot = data.test["clean"], data.test["rotate"]
    assert clean.x.shape[1:] == (1, 16, 16) and len(rot.y) == len(clean.y) // 2
    n = len(data.train["train"].y) + len(data.val["train"].y) + len(clean.y)
    assert n == 1797
