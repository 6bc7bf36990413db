"""OOD claims: each judge on hand-built per-run tables, one test per verdict, and the closed-form
FLD probe that puts ``ood.nonmonotone_value``'s numbers in the store. The trained controls run in
``test_claims_controls.py``."""

from __future__ import annotations

import pandas as pd
import pytest

from genlab.claims import CLAIMS
from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes.base import EvalContext
from genlab.tasks import TASKS


def table(claim_id: str, values, **over) -> tuple:
    claim = CLAIMS.get(claim_id).obj
    cfg = claim.config("smoke", over)
    rows = [
        {**a.labels, "run_id": a.spec.run_id, "status": "done", **values(a.labels)}
        for a in claim.arms(cfg)
    ]
    return claim.evaluate(cfg, pd.DataFrame(rows))


# ---- ood.nonmonotone_value ----------------------------------------------------------------------

U = [0.25, 0.24, 0.235, 0.23, 0.228, 0.229, 0.231, 0.233, 0.235, 0.236]  # falls, then rises
DOWN = [0.25, 0.24, 0.23, 0.21, 0.195, 0.18, 0.17, 0.165, 0.161, 0.16]  # more data never hurts


def curve(errors: list[float], se: float, weighted: list[float] | None = None):
    def values(lab):
        i = [0, 2, 5, 10, 20, 50, 100, 200, 500, 1000].index(lab["m"])
        w = (weighted or DOWN)[i]
        return {"error": errors[i], "error_se": se, "weighted": w, "weighted_se": se, "alpha": 0.5}

    return values


@pytest.mark.parametrize(
    ("values", "verdict"),
    [
        (curve(U, 1e-4), "reproduced"),
        (curve(DOWN, 1e-4), "not reproduced"),  # no rise
        (curve(U, 1e-4, weighted=U), "not reproduced"),  # weighting does not remove the rise
        (curve(U, 3e-3), "inconclusive"),  # too few draws: the rise is within 3 SE
    ],
)
def test_nonmonotone_value_one_test_per_verdict(values, verdict):
    r = table("ood.nonmonotone_value", values)
    assert r.verdict == verdict, r.evidence


def test_fld_probe_writes_the_closed_form_risk():
    entry = TASKS.get("two_gaussian_ood")
    data = entry.obj(entry.params(m=50, theta=45.0, n_test=10), 0)
    probe = PROBES.get("fld_risk")
    out = probe.obj(None, EvalContext(None, data, 0), probe.params(draws=2000))
    assert out[("test/target", "fld_error")] == pytest.approx(0.2345, abs=0.003)  # #47's U bottom
    assert 0 <= out[("test/target", "fld_best_alpha")] <= 1
    assert out[("test/target", "fld_weighted_error")] < out[("test/target", "fld_error")]
    other = TASKS.get("structured_features")
    with pytest.raises(SpecError, match="two_gaussian_ood"):
        probe.obj(None, EvalContext(None, other.obj(other.params(), 0), 0), probe.params())


# ---- ood.feature_contamination ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("drops", "verdict"),
    [
        ((0.2, 0.25, 0.3, 0.22, 0.28), "reproduced"),
        ((0.0, 0.01, 0.02, 0.0, 0.01), "not reproduced"),
        ((0.0, 0.3, 0.05, 0.2, 0.1), "inconclusive"),
    ],
)
def test_feature_contamination_one_test_per_verdict(drops, verdict):
    r = table(
        "ood.feature_contamination",
        lambda lab: {"id": 0.97, "ood": 0.97 - drops[lab["seed"]], "r2": 0.95},
    )
    assert r.verdict == verdict, r.evidence


# ---- ood.intermediate_layers --------------------------------------------------------------------

WIN, LOSE, NOISY = (0.1, 0.1, 0.1), (-0.1, -0.1, -0.1), (-0.2, 0.05, 0.25)


@pytest.mark.parametrize(
    ("gains", "verdict"),
    [
        ((WIN, WIN, WIN, LOSE), "reproduced"),
        ((WIN, LOSE, LOSE, NOISY), "not reproduced"),
        ((WIN, WIN, NOISY, LOSE), "inconclusive"),
    ],
)
def test_intermediate_layers_one_test_per_verdict(gains, verdict):
    shifts = ["rotation", "color", "appearance", "noise"]

    def values(lab):
        g = gains[shifts.index(lab["shift"])][lab["seed"]]
        return {"L0": 0.5, "L1": 0.6 + g, "L2": 0.6 + 0.01 * lab["seed"], "val": 0.9}

    r = table("ood.intermediate_layers", values)
    assert r.verdict == verdict, r.evidence
    assert "L1 - L2" in r.evidence  # the best intermediate layer, chosen by its mean


def test_intermediate_layers_rejects_unknown_shifts():
    with pytest.raises(SpecError, match="shifts"):
        CLAIMS.get("ood.intermediate_layers").obj.config("smoke", {"shifts": ["cifar"]})
