"""Row 29 (MG-TFNO, #29): the Burgers solver, the neuraloperator models (``operators`` extra),
the relative L2 loss and probe, and the judge of ``operators.tfno`` on hand-built tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from genlab.claims import CLAIMS
from genlab.tasks.burgers import BurgersParams, burgers_1d, initial_conditions, solve

CLAIM = CLAIMS.get("operators.tfno").obj


def test_solver_converges_and_conserves_the_mean():
    rng = np.random.default_rng(0)
    u0 = initial_conditions(3, 256, rng)
    ref = solve(u0, 0.01, 1.0, 2000)
    coarse = solve(u0[:, ::2], 0.01, 1.0, 500)
    assert np.linalg.norm(ref[:, ::2] - coarse) / np.linalg.norm(ref) < 1e-3
    assert np.abs(ref.mean(1) - u0.mean(1)).max() < 1e-10  # a conservation law: the mean stays


def test_heat_limit_is_exact():
    u0 = 1e-6 * np.sin(2 * np.pi * np.arange(64) / 64)[None]  # tiny: the nonlinear term vanishes
    out = solve(u0, 0.05, 1.0, 100)
    want = u0 * math.exp(-0.05 * 4 * math.pi**2)
    assert np.abs(out - want).max() <= 1e-5 * np.abs(want).max()


def test_splits_share_test_functions_at_two_resolutions():
    d = burgers_1d(BurgersParams(n_train=5, n_test=3, resolution=16, grid=32, time_steps=100), 0)
    assert d.train["main"].x.shape == (5, 1, 16) and d.test["fine"].y.shape == (3, 1, 32)
    assert torch.equal(d.test["fine"].y[..., ::2], d.test["iid"].y)


def test_spectral_parameter_counts_of_the_claims_arms():
    pytest.importorskip("neuralop", reason="pip install 'genlab[operators]'")
    from genlab.models import MODELS
    from genlab.models.operators import spectral_parameters

    info = burgers_1d(BurgersParams(n_train=2, n_test=1), 0).info
    size = {"modes": 16, "width": 32, "layers": 4}
    dense = spectral_parameters(MODELS.get("fno").obj(MODELS.get("fno").params(**size), info))
    tucker = {
        r: spectral_parameters(
            MODELS.get("tfno").obj(MODELS.get("tfno").params(**size, rank=r), info)
        )
        for r in (1.0, 0.05, 0.005)
    }
    assert dense == 4 * 32 * 32 * 9
    assert tucker == {1.0: 36768, 0.05: 1896, 0.005: 296}
    assert dense / tucker[0.05] >= 10


def test_operator_keeps_complex_weights_and_any_resolution():
    pytest.importorskip("neuralop", reason="pip install 'genlab[operators]'")
    from genlab.models import MODELS

    info = burgers_1d(BurgersParams(n_train=2, n_test=1), 0).info
    net = MODELS.get("tfno").obj(MODELS.get("tfno").params(modes=4, width=8, layers=1), info)
    net = net.to(torch.float64)
    assert any(p.dtype == torch.complex128 for p in net.parameters())
    assert net(torch.randn(2, 1, 128, dtype=torch.float64)).shape == (2, 1, 128)


def test_rel_l2_loss_and_probe_agree():
    from genlab.data import TaskData, TaskInfo
    from genlab.methods import METHODS
    from genlab.probes.base import EvalContext
    from genlab.probes.regression import regression_error

    info = TaskInfo(kind="regression", n_outputs=1)
    y = torch.tensor([[[3.0, 4.0]], [[1.0, 0.0]]])
    model = torch.nn.Identity()
    x = y * torch.tensor([[[1.5]], [[1.0]]])  # errors: 0.5 relative, then 0
    method = METHODS.get("rel_l2").obj(METHODS.get("rel_l2").params(), info)
    loss, _ = method.loss(model, {"main": (x, y)})
    assert loss.item() == pytest.approx(0.25)
    from genlab.data import Split

    data = TaskData({"main": Split(x, y)}, {}, {}, info)
    out = regression_error(model, EvalContext(model, data, 0), None)
    assert out[("train/main", "rel_l2")] == pytest.approx(0.25)
    assert out[("train/main", "nde")] == pytest.approx(6.25 / 26)


def table(dense, reduced, fine_factor=1.5, train_reduced=0.02):
    rows = []
    for arm, errs in (("dense", dense), ("matched", dense), ("reduced", reduced)):
        for s, e in enumerate(errs):
            rows.append(
                {
                    "arm": arm,
                    "seed": s,
                    "data_seed": s,
                    "test": e,
                    "fine": e * fine_factor,
                    "train": train_reduced if arm == "reduced" else 0.02,
                }
            )
    t = pd.DataFrame(rows)
    t["status"], t["run_id"] = "done", [f"r{i}" for i in range(len(t))]
    return t


DENSE = [0.020, 0.021, 0.019, 0.020, 0.022, 0.020]


@pytest.mark.parametrize(
    ("reduced", "train", "verdict"),
    [
        ([0.019, 0.020, 0.018, 0.019, 0.021, 0.019], 0.02, "reproduced"),
        ([0.030, 0.032, 0.029, 0.031, 0.033, 0.030], 0.02, "not reproduced"),  # 1.5x worse
        ([0.015, 0.030, 0.018, 0.028, 0.020, 0.026], 0.02, "inconclusive"),  # straddles
        ([0.019, 0.020, 0.018, 0.019, 0.021, 0.019], 0.3, "inconclusive"),  # did not fit
    ],
    ids=["matches", "worse", "straddles", "unfit"],
)
def test_tfno_judge(reduced, train, verdict):
    cfg = CLAIM.config("full", {"seeds": 6})
    r = CLAIM.evaluate(cfg, table(DENSE, reduced, train_reduced=train))
    assert r.verdict == verdict, r.evidence
