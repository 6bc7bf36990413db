"""Row 36 (SIDED + AMDA, #36): the synthetic sites, the augmentations, the seq2point model and the
judge of ``nilm.amda`` on hand-built tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from genlab.claims import CLAIMS
from genlab.tasks.industrial_load import (
    APPLIANCES,
    IndustrialLoadParams,
    appliances,
    industrial_load,
)

CLAIM = CLAIMS.get("nilm.amda").obj
SMALL = {"days": 3, "test_days": 2, "n_windows": 50, "n_test": 30}


def test_appliances_have_their_kind():
    series = appliances(3, np.random.default_rng(0))
    power = dict(zip(APPLIANCES, series, strict=True))
    assert (power["pv"] <= 0).all() and (power["chp"] <= 0).all()  # generators
    assert set(np.unique(power["cooling"])) <= {0.0, 40.0}  # a compressor on or off
    assert set(np.unique(power["ev"])) <= {0.0, 22.0}
    assert power["background"].mean() > np.abs(power["chp"]).mean()  # the dominant load


def test_arms_share_their_windows_and_tests():
    data = {
        a: industrial_load(IndustrialLoadParams(augment=a, **SMALL), 3)
        for a in ("none", "random", "amda")
    }
    none = data["none"]
    for a in ("random", "amda"):
        d = data[a]
        assert len(d.train["main"]) == 2 * len(none.train["main"])
        assert torch.equal(d.train["main"].x[:50], none.train["main"].x)
        for split in ("site_a", "site_b"):
            assert torch.equal(d.test[split].x, none.test[split].x)
        assert not torch.equal(d.train["main"].x[50:], none.train["main"].x)


def test_same_site_when_there_is_no_shift():
    d = industrial_load(IndustrialLoadParams(site_shift=1.0, **SMALL), 0)
    assert d.info.extra["site_b_factors"] == [1.0] * 5
    shifted = industrial_load(IndustrialLoadParams(site_shift=2.0, **SMALL), 0)
    assert all(0.5 <= f <= 2.0 for f in shifted.info.extra["site_b_factors"])


def test_seq2point_maps_windows_to_one_value():
    from genlab.models import MODELS

    d = industrial_load(IndustrialLoadParams(**SMALL), 0)
    net = MODELS.get("seq2point").obj(MODELS.get("seq2point").params(), d.info)
    assert net(d.train["main"].x[:4]).shape == (4, 1) == d.train["main"].y[:4].shape
    assert sum(p.numel() for p in net.parameters()) < 20_000


def table(nde: dict[str, list[float]], train: float = 0.05) -> pd.DataFrame:
    rows = [
        {
            "augment": a,
            "seed": s,
            "data_seed": s,
            "site_b": v,
            "site_a": 0.1,
            "train": train if a == "amda" else 0.05,
        }
        for a, vals in nde.items()
        for s, v in enumerate(vals)
    ]
    t = pd.DataFrame(rows)
    t["status"], t["run_id"] = "done", [f"r{i}" for i in range(len(t))]
    return t


NONE = [0.60, 0.62, 0.58, 0.61, 0.59]
RANDOM = [0.45, 0.46, 0.44, 0.45, 0.47]


@pytest.mark.parametrize(
    ("amda", "train", "verdict"),
    [
        ([0.30, 0.31, 0.29, 0.30, 0.32], 0.05, "reproduced"),
        ([0.46, 0.47, 0.45, 0.46, 0.48], 0.05, "not reproduced"),  # AMDA no better than random
        ([0.30, 0.50, 0.35, 0.48, 0.40], 0.05, "inconclusive"),  # straddles
        ([0.30, 0.31, 0.29, 0.30, 0.32], 0.5, "inconclusive"),  # AMDA's arm did not fit
    ],
    ids=["ordered", "amda-no-better", "straddles", "unfit"],
)
def test_amda_judge(amda, train, verdict):
    r = CLAIM.evaluate(
        CLAIM.config("full"), table({"none": NONE, "random": RANDOM, "amda": amda}, train)
    )
    assert r.verdict == verdict, r.evidence
