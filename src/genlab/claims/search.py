"""DomainBed's random search inside a claim (Gulrajani & Lopez-Paz 2021, "In search of lost domain
generalization": ``hparams_registry.py``, ``model_selection.py``): each arm is trained at ``k``
hyper-parameter draws per seed, and per arm and seed the judge reads the draw of best
training-domain validation, so that every method is compared at its best.

Draw 0 is the arm as the claim writes it (DomainBed's default configuration, ``hparams_seed`` 0);
draw ``d > 0`` sets the learning rate, the batch size and each of the method's own parameters that
the arm leaves free (its ``RANGES``, e.g. ``irm_lambda``, ``groupdro_eta``, ``ridg_reg``) from
DomainBed's ranges for small images, seeded by the method, the trial's seed and ``d``
(``seed_hash(hparams_seed, trial_seed)``: one draw per trial, shared by the held-out settings).
Parameters the claim names (what it manipulates, e.g. MoDify's tolerance) stay fixed.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import pandas as pd

from genlab.design import Arm
from genlab.methods.dg_shared import sample_params
from genlab.spec import parse_spec, set_path
from genlab.sweep.spec import draw_seed, method_ranges

LR = ("log10", -4.5, -2.5)  # DomainBed's small-image range, 10^U(-4.5, -2.5)
# DomainBed's 2^U(3, 9) per training environment, as powers of two (an environment of the digit
# tasks holds a few hundred training images; examples/sweeps/domainbed_digits.toml does the same)
BATCH_SIZES = (8, 16, 32, 64, 128, 256)
DRAW = "draw"  # the label of an arm's draw


def draw(method: str, fixed: set[str], seed: int, d: int) -> dict[str, Any]:
    """Spec overrides (key paths) of draw ``d`` > 0 of ``method`` for the trial ``seed``; the
    method's parameters in ``fixed`` are not drawn."""
    s = draw_seed("claim-search", method, seed, d)
    ranges = {k: v for k, v in method_ranges(method).items() if k not in fixed}
    params = sample_params({**ranges, "__lr": LR}, s)
    batch_rng = np.random.RandomState(draw_seed("claim-search", method, seed, d, "batch_size"))
    batch = BATCH_SIZES[batch_rng.randint(len(BATCH_SIZES))]
    out: dict[str, Any] = {"optimizer.lr": params.pop("__lr"), "batch_size": int(batch)}
    out.update({f"method.params.{k}": v for k, v in params.items()})
    return out


def with_draws(arms: Sequence[Arm], k: int, keep: Collection[str] | None = None) -> list[Arm]:
    """Each arm at ``k`` draws, labelled ``draw`` (``k == 1``: the arms unchanged, unlabelled).
    The method parameters in ``keep`` are not drawn (``None``: those each arm sets itself)."""
    if k < 1:
        raise ValueError(f"search must be at least 1 (draw 0 is the arm itself), got {k}")
    if k == 1:
        return list(arms)
    out = []
    for arm in arms:
        out.append(Arm({**arm.labels, DRAW: 0}, arm.spec))
        base = arm.spec.model_dump(mode="json")
        method = arm.spec.method.name
        fixed = set(arm.spec.method.params) if keep is None else set(keep)
        for d in range(1, k):
            data = base
            for key, value in draw(method, fixed, arm.spec.seed, d).items():
                data = set_path(data, key, value)
            out.append(Arm({**arm.labels, DRAW: d}, parse_spec(data)))
    return out


def best_draw(table: pd.DataFrame, on: str, by: Sequence[str]) -> pd.DataFrame:
    """Per group of ``by`` (an arm's labels and its seed), the row of the draw with the highest
    ``on`` (ties and all-NaN groups: the lowest draw), without the ``draw`` column."""
    if DRAW not in table:
        return table
    score = table[on].astype(float).fillna(-np.inf)
    order = table.assign(_score=score).sort_values(
        [*by, "_score", DRAW], ascending=[True] * len(by) + [False, True]
    )
    picked = order.groupby(list(by), sort=False, dropna=False).head(1)
    return picked.drop(columns=["_score", DRAW]).loc[sorted(picked.index)].reset_index(drop=True)
