"""Held-out combinations: which combinations of attribute values train, which test.

The split of compositional-generalization studies that hold out combinations of known parts:
shape x colour images (Uselis et al., #59), label sets of documents (Chai et al., #71), rule parts
of string rewrites (Zhang et al., #70), attribute triples (Med-MAT, #86). ``coverage`` is the share
of all combinations that train; every value of every attribute must occur in a trained combination
(otherwise a held-out combination contains a part never seen, and the split no longer tests
recombination), and at least one combination must be held out. Bad knobs raise ``ValueError``
naming ``coverage``, which the engine turns into a ``SpecError`` (exit code 2).

Construction: a random cover first (``max(sizes)`` combinations that together show every value,
each attribute's values in a random order), then further combinations drawn at random.
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import Field

from genlab.registry import Params


class ComboParams(Params):
    """The knobs every held-out-combination task shares."""

    coverage: float = Field(0.5, gt=0, le=1, description="share of combinations that train")
    per_combo: int = Field(20, ge=1, description="training examples per trained combination")
    n_val: int = Field(5, ge=0, description="val examples per trained combination")
    n_test: int = Field(20, ge=1, description="test examples per held-out combination")


def all_combos(sizes: tuple[int, ...]) -> np.ndarray:
    """Every combination, ``(prod(sizes), len(sizes))``, in lexicographic order."""
    grids = np.meshgrid(*(np.arange(s) for s in sizes), indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1)


def combination_split(
    sizes: tuple[int, ...], coverage: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``(trained, held_out)`` combinations, each ``(k, len(sizes))`` (see the module doc)."""
    if any(s < 1 for s in sizes) or len(sizes) < 2:
        raise ValueError(f"attributes: need at least 2 attributes of >= 1 value, got {sizes}")
    total = math.prod(sizes)
    n_train, n_cover = round(coverage * total), max(sizes)
    if not 0 < coverage <= 1:
        raise ValueError(f"coverage must be in (0, 1], got {coverage}")
    if n_train >= total:
        raise ValueError(
            f"coverage: {coverage} trains all {total} combinations and leaves no held-out "
            "combination to test; use a coverage below 1"
        )
    if n_train < n_cover:
        raise ValueError(
            f"coverage: {coverage} trains {n_train} of {total} combinations, fewer than the "
            f"{n_cover} needed to show every value of every attribute "
            f"(use coverage >= {n_cover / total:.3f})"
        )
    orders = [rng.permutation(s) for s in sizes]
    cover = {tuple(int(o[i % len(o)]) for o in orders) for i in range(n_cover)}
    combos = [tuple(int(v) for v in c) for c in all_combos(sizes)]
    rest = [c for c in combos if c not in cover]
    extra = rng.permutation(len(rest))[: n_train - len(cover)]
    trained = cover | {rest[i] for i in extra}
    held = [c for c in combos if c not in trained]
    return np.array(sorted(trained)), np.array(held)


def check_seen(trained: np.ndarray, sizes: tuple[int, ...], field: str = "coverage") -> None:
    """Raise ``ValueError`` naming ``field`` when some attribute value is in no trained combo."""
    for a, s in enumerate(sizes):
        unseen = sorted(set(range(s)) - set(trained[:, a].tolist()))
        if unseen:
            raise ValueError(
                f"{field}: attribute {a} values {unseen} are in no trained combination"
            )
