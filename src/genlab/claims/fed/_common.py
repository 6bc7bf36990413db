"""What the federated claims share: the ``fed-digits`` preset as a spec dict, paired intervals."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from pydantic import Field

from genlab.claims.guards import Interval
from genlab.claims.measures import Derived, series
from genlab.registry import Params
from genlab.spec import load_spec_file

TEST = "test/heldout"


class FedConfig(Params):
    """Clients, heterogeneity, rounds, local work and seeds of a federated claim."""

    clients: int = Field(10, ge=2)
    alpha: float = Field(0.1, gt=0, description="the heterogeneous arm's Dirichlet alpha")
    alpha_iid: float = Field(100.0, gt=0, description="the near-IID arm's alpha")
    rounds: int = Field(50, ge=1)
    local_steps: int = Field(5, ge=1, description="about one local epoch of ~150 examples")
    lr: float = Field(0.05, gt=0, description="local SGD learning rate (momentum 0.9)")
    seeds: int = Field(5, ge=3, description="paired seeds (the split is drawn from each)")


def fed_base(cfg: FedConfig) -> dict[str, Any]:
    """``presets/fed-digits.toml`` with ``cfg``'s clients, rounds, local steps and lr."""
    base = load_spec_file("fed-digits")
    base["fed"].update(clients=cfg.clients, local_steps=cfg.local_steps)
    base["optimizer"]["lr"] = cfg.lr
    base["steps"] = cfg.rounds
    return base


def _mean_dissimilarity(m: pd.DataFrame) -> float:
    s = series(m, "fed", "update_dissimilarity")
    s = s[s.index > 0]
    return float(s.mean()) if len(s) else math.nan


DISSIMILARITY = Derived(
    _mean_dissimilarity,
    "mean over rounds of the mean pairwise cosine "
    "dissimilarity of client updates (fed:update_dissimilarity)",
)


def paired(
    table: pd.DataFrame, measure: str, col: str, a: Any, b: Any, **where: Any
) -> list[float]:
    """Per seed, ``measure`` of the arm ``col == a`` minus that of ``col == b`` (rows ``where``)."""
    t = table
    for k, v in where.items():
        t = t[t[k] == v]
    wide = t.pivot_table(index="seed", columns=col, values=measure)
    if a not in wide or b not in wide:
        return []
    return (wide[a] - wide[b]).dropna().tolist()


def interval(name: str, values: list[float], **kw: Any) -> Interval:
    """``Interval.of`` that stays NaN (inconclusive) without values."""
    if not values:
        return Interval(name, math.nan, math.nan, math.nan, 0, **kw)
    return Interval.of(name, values, **kw)
