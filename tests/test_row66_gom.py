"""Row 66 (GOMs, #66): the point-mass dynamics among walls, the occupancy targets, the task for
both learners, the occupancy model, its method, the return probe and the judge of
``control.gom`` on hand-built tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch
from torch import nn

from genlab.claims import CLAIMS
from genlab.datasets.point_nav import (
    episode_return,
    mpc_policy,
    occupancy,
    phi,
    random_policy,
    step,
    window,
)
from genlab.errors import SpecError
from genlab.methods.gom import Gom, GomParams
from genlab.models.gom_mdn import GomMDNParams, gom_mdn
from genlab.probes.base import EvalContext
from genlab.probes.nav_return import nav_return
from genlab.tasks.point_nav import PointNavParams, point_nav

CLAIM = CLAIMS.get("control.gom").obj
SMALL = {"n_traj": 5, "length": 40, "gamma": 0.8, "n_rewards": 3, "n_starts": 2, "samples": 8}


def test_walls_block_and_the_open_arena_moves_freely():
    p = torch.tensor([[-0.05, -0.5], [-0.05, 0.8], [0.95, 0.0]], dtype=torch.float64)
    a = torch.tensor([[1.0, 0.2], [1.0, 0.0], [1.0, 0.0]], dtype=torch.float64)
    q = step(p, a, walls=1)
    assert q[0, 0] == p[0, 0] and math.isclose(q[0, 1], -0.48)  # slides along the wall
    assert math.isclose(q[1, 0], 0.05)  # above the wall's top: passes
    assert q[2, 0] == 1.0  # the box clips
    assert torch.allclose(step(p, a, walls=0)[:2], p[:2] + 0.1 * a[:2])
    assert step(torch.tensor([[0.3, 0.0]]), torch.tensor([[1.0, 0.0]]), walls=2)[0, 0] == 0.3


def test_occupancy_is_the_discounted_feature_sum():
    f = torch.rand(2, 30, 4, dtype=torch.float64)
    psi = occupancy(f, 0.9)
    direct = 0.1 * sum(0.9**j * f[:, 3 + j] for j in range(27))
    assert torch.allclose(psi[:, 3], direct)
    assert phi(torch.zeros(7, 2)).shape == (7, 25) and window(0.95) == 90


def test_both_learners_share_trajectories_and_episodes():
    g = point_nav(PointNavParams(learner="gom", **SMALL), 1)
    d = point_nav(PointNavParams(learner="dynamics", **SMALL), 1)
    keep = 40 - window(0.8) + 1
    assert g.train["main"].x.shape == (5 * keep, 27) and g.train["main"].y.shape == (5 * keep, 2)
    assert d.train["main"].x.shape == (200, 4) and d.info.input_shape == (4,)
    assert torch.equal(g.train["main"].x[0, :2], d.train["main"].x[0, :2])  # same first state
    assert torch.equal(g.test["episodes"].x[:, :2], d.test["episodes"].x[:, :2])
    assert torch.equal(g.test["episodes"].meta["w"], d.test["episodes"].meta["w"])
    assert g.test["episodes"].meta["w"].sum(1).eq(1).all()  # one bump per reward
    # the dynamics targets are the true moves
    x, y = d.train["main"].x.double(), d.train["main"].y.double()
    assert torch.allclose(x[:, :2] + y, step(x[:, :2], x[:, 2:], 1), atol=1e-6)
    again = point_nav(PointNavParams(learner="gom", **SMALL), 1)
    assert torch.equal(again.train["main"].x, g.train["main"].x)
    other = point_nav(PointNavParams(learner="gom", **SMALL), 2)
    assert not torch.equal(other.train["main"].x, g.train["main"].x)


def test_model_method_and_refusals():
    g = point_nav(PointNavParams(learner="gom", **SMALL), 0)
    net = gom_mdn(GomMDNParams(width=16, components=3), g.info)
    x = g.train["main"].x[:10]
    assert net(x).shape == (10, 2) and torch.isfinite(net.nll(x))
    mu, weight = net.candidates(x[:, :2])
    assert mu.shape == (10, 3, 25) and torch.allclose(weight.sum(1), torch.ones(10))
    method = Gom(GomParams(), g.info)
    loss, logs = method.loss(net, {"main": (x, g.train["main"].y[:10])})
    assert torch.isfinite(loss) and set(logs) == {"nll", "bc"}
    with pytest.raises(SpecError, match="nll"):
        method.wrap(nn.Linear(27, 2))
    d = point_nav(PointNavParams(learner="dynamics", **SMALL), 0)
    with pytest.raises(ValueError, match="learner='gom'"):
        gom_mdn(GomMDNParams(), d.info)


class TrueDynamics(nn.Module):
    """The exact one-step model: its MPC is the oracle."""

    def __init__(self, walls: int) -> None:
        super().__init__()
        self.walls, self.dummy = walls, nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return step(x[:, :2], x[:, 2:], self.walls) - x[:, :2]


def test_probe_normalises_between_random_and_the_oracle():
    d = point_nav(PointNavParams(learner="dynamics", **SMALL), 0)
    out = nav_return(TrueDynamics(1), EvalContext(TrueDynamics(1), d, 0), None)
    assert out[("test/episodes", "normalised")] == pytest.approx(1.0)
    assert out[("test/episodes", "oracle")] > out[("test/episodes", "random")]
    g = point_nav(PointNavParams(learner="gom", **SMALL), 0)
    net = gom_mdn(GomMDNParams(width=8, components=2), g.info)
    res = nav_return(net, EvalContext(net, g, 0), None)
    assert all(math.isfinite(v) for v in res.values()) and len(res) == 4
    with pytest.raises(SpecError, match="candidates"):
        nav_return(nn.Linear(27, 2), EvalContext(nn.Linear(27, 2), g, 0), None)


def test_random_and_mpc_policies_are_deterministic():
    starts = torch.rand(4, 2, dtype=torch.float64) * 2 - 1
    w = torch.eye(25, dtype=torch.float64)[:4]
    mpc = lambda: mpc_policy(lambda q, a: step(q, a, 1), 0.8, 10, 8, 4, every=2)  # noqa: E731
    one, two = (episode_return(mpc(), starts, w, 0.8, 15, 1) for _ in range(2))
    assert torch.equal(one, two)
    r1, r2 = (episode_return(random_policy(), starts, w, 0.8, 15, 1) for _ in range(2))
    assert torch.equal(r1, r2) and (one >= r1 - 1e-9).float().mean() >= 0.5


def test_bad_params_say_what_is_wrong():
    with pytest.raises(ValueError, match="length"):
        PointNavParams(gamma=0.95, length=50)
    with pytest.raises(ValueError, match="walls"):
        PointNavParams(walls=3)
    with pytest.raises(SpecError, match="gammas"):
        CLAIM.config("full", {"gammas": (0.95, 0.8)})


def table(gom_long: list[float], mpc_long: list[float], train: float = 0.2) -> pd.DataFrame:
    """Per-run table: both learners at 0.7 at the short discount, the given values at the long."""
    rows = []
    for learner, vals in (("gom", gom_long), ("mpc", mpc_long)):
        for gamma in (0.8, 0.95):
            for s, v in enumerate(vals):
                rows.append(
                    {
                        "learner": learner,
                        "gamma": gamma,
                        "seed": s,
                        "data_seed": s,
                        "norm": v if gamma == 0.95 else 0.7,
                        "train": train if learner == "gom" else 0.2,
                    }
                )
    t = pd.DataFrame(rows)
    t["status"], t["run_id"] = "done", [f"r{i}" for i in range(len(t))]
    return t


MPC = [0.50, 0.52, 0.48, 0.51]


@pytest.mark.parametrize(
    ("gom", "train", "verdict"),
    [
        ([0.80, 0.82, 0.78, 0.81], 0.2, "reproduced"),
        ([0.40, 0.42, 0.38, 0.41], 0.2, "not reproduced"),  # GOM worse at the long discount
        ([0.50, 0.75, 0.45, 0.70], 0.2, "inconclusive"),  # straddles
        ([0.80, 0.82, 0.78, 0.81], 0.95, "inconclusive"),  # the GOM arms did not fit
    ],
    ids=["gain", "loss", "straddles", "unfit"],
)
def test_gom_judge(gom, train, verdict):
    r = CLAIM.evaluate(CLAIM.config("full"), table(gom, MPC, train))
    assert r.verdict == verdict, r.evidence


def test_judge_is_inconclusive_at_the_floor():
    t = table([0.02] * 4, [0.0] * 4)
    t["norm"] = t["norm"].where(t["gamma"] == 0.95, 0.01)
    r = CLAIM.evaluate(CLAIM.config("full"), t)
    assert r.verdict == "inconclusive" and "floor" in r.evidence
