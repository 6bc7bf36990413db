"""Row 4 (MOVE, #4): the point-mass reaching environment and its expert, the static and moving
demonstrations, the policy, the rollout probe and the judge of ``control.move`` on hand-built
tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

pytest.importorskip("gymnasium", reason="the control extra (gymnasium) is not installed")

from genlab.claims import CLAIMS  # noqa: E402
from genlab.datasets.point_reach import STEP, PointReachEnv, expert, rollout  # noqa: E402
from genlab.errors import SpecError  # noqa: E402
from genlab.tasks.point_reach import PointReachParams, point_reach  # noqa: E402

CLAIM = CLAIMS.get("control.move").obj
SMALL = {"n_demos": 6, "horizon": 12, "n_test": 40}


def test_env_follows_the_gymnasium_api_and_the_expert_reaches():
    from gymnasium.utils.env_checker import check_env

    env = PointReachEnv(horizon=30)
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(options={"agent": [-0.9, -0.9], "target": [0.7, 0.6]})
    for _ in range(30):
        obs, reward, terminated, truncated, info = env.step(expert(obs))
        if terminated:
            break
    assert info["success"] and terminated and not truncated
    assert env.observation_space.contains(obs) and reward > -0.05


def test_moving_target_moves_and_stays_in_the_box():
    env = PointReachEnv(horizon=200, target_speed=0.1, terminate=False)
    obs, _ = env.reset(
        seed=0, options={"agent": [0, 0], "target": [0.5, 0.5], "velocity": [0.09, -0.07]}
    )
    targets = []
    for _ in range(200):
        obs, *_ = env.step(np.zeros(2))
        targets.append(obs[2:].copy())
    targets = np.array(targets)
    assert np.abs(targets).max() <= 1.0 and np.ptp(targets, 0).min() > 1.0
    assert np.allclose(np.linalg.norm(np.diff(targets[:3], axis=0), axis=1), np.hypot(0.09, 0.07))


def test_arms_share_starts_budget_and_tests():
    static = point_reach(PointReachParams(targets="static", **SMALL), 3)
    moving = point_reach(PointReachParams(targets="moving", **SMALL), 3)
    xs, xm = static.train["main"].x, moving.train["main"].x
    assert xs.shape == xm.shape == (6 * 12, 4) and static.train["main"].y.shape == (72, 2)
    first = torch.arange(6) * 12
    assert torch.equal(xs[first], xm[first])  # the same start and target of each episode
    # static targets stay put within each episode; moving ones drift
    gs, gm = xs[:, 2:].reshape(6, 12, 2), xm[:, 2:].reshape(6, 12, 2)
    assert torch.equal(gs, gs[:, :1].expand_as(gs)) and (gm - gm[:, :1]).abs().max() > 0.01
    for split in ("heldout", "seen"):
        assert torch.equal(static.test[split].x, moving.test[split].x)
    again = point_reach(PointReachParams(targets="moving", **SMALL), 3)
    assert torch.equal(again.train["main"].x, xm)  # deterministic in data_seed
    assert not torch.equal(
        point_reach(PointReachParams(targets="moving", **SMALL), 4).train["main"].x, xm
    )


def test_demos_are_nested_in_n_and_sites_cover_the_tests():
    small = point_reach(PointReachParams(targets="moving", n_demos=3, horizon=12), 0)
    big = point_reach(PointReachParams(targets="moving", n_demos=6, horizon=12), 0)
    assert torch.equal(big.train["main"].x[: 3 * 12], small.train["main"].x)
    one = point_reach(PointReachParams(targets="static", sites=1, **SMALL), 0)
    site = one.train["main"].x[0, 2:]
    assert torch.equal(one.test["heldout"].x[:, 2:], site.expand(40, 2))
    left = point_reach(PointReachParams(demo_x_max=0.0, test_x_min=0.2, **SMALL), 0)
    assert (left.train["main"].x[::12, 2] <= 0).all() and (
        left.test["heldout"].x[:, 2] >= 0.2
    ).all()


def test_expert_succeeds_on_every_test_episode_and_rollout_matches_env():
    d = point_reach(PointReachParams(**SMALL, radius=0.05), 0)
    policy = lambda o: torch.tensor(expert(o.double().numpy()))  # noqa: E731
    assert rollout(policy, d.test["heldout"].x.double(), 30, 0.05).mean() == 1.0
    stuck = rollout(lambda o: torch.zeros(len(o), 2), d.test["heldout"].x.double(), 30, 0.05)
    assert stuck.mean() < 0.1
    # batched rollout and the gymnasium env agree step by step for a fixed action field
    env, start = PointReachEnv(horizon=5, radius=0.05), d.test["heldout"].x[0].double()
    obs, _ = env.reset(options={"agent": start[:2].numpy(), "target": start[2:].numpy()})
    half = lambda o: 0.5 * torch.ones(len(o), 2)  # noqa: E731
    for _ in range(5):
        obs, _, term, *_ = env.step(np.full(2, 0.5))
    reached = np.linalg.norm(obs[:2] - obs[2:]) < 0.05
    assert bool(rollout(half, start[None], 5, 0.05)[0]) == reached
    assert np.allclose(obs[:2], np.clip(start[:2].numpy() + 5 * STEP * 0.5, -1, 1))


def test_policy_and_probe_shapes():
    from genlab.models import MODELS
    from genlab.probes.base import EvalContext
    from genlab.probes.reach import reach_success

    d = point_reach(PointReachParams(**SMALL), 0)
    net = MODELS.get("policy_mlp").obj(MODELS.get("policy_mlp").params(), d.info)
    assert net(d.train["main"].x[:5]).shape == (5, 2)
    assert sum(p.numel() for p in net.parameters()) == 4610
    out = reach_success(net, EvalContext(net, d, 0), None)
    assert set(out) == {("test/heldout", "success"), ("test/seen", "success")}
    assert all(0.0 <= v <= 1.0 for v in out.values())
    with pytest.raises(ValueError, match="regression"):
        from genlab.tasks.digits import digits  # noqa: F401  (any classification task)

        MODELS.get("policy_mlp").obj(
            MODELS.get("policy_mlp").params(),
            type(d.info)(kind="classification", n_outputs=3, input_shape=(4,)),
        )


def test_bad_params_say_what_is_wrong():
    with pytest.raises(ValueError, match="n_demos"):
        PointReachParams(n_demos=0)
    with pytest.raises(ValueError, match="targets"):
        PointReachParams(targets="drifting")
    with pytest.raises(SpecError, match="n_demos"):
        CLAIM.config("full", {"n_demos": ()})


def table(moving: list[float], static: list[float], train: float = 0.01) -> pd.DataFrame:
    """Per-run table: the same held-out success at every n, per seed."""
    rows = []
    for targets, vals in (("moving", moving), ("static", static)):
        for n in (4, 8, 16):
            for s, v in enumerate(vals):
                rows.append(
                    {
                        "targets": targets,
                        "n_demos": n,
                        "seed": s,
                        "data_seed": s,
                        "heldout": v,
                        "seen": 0.9,
                        "train": train if targets == "moving" else 0.01,
                    }
                )
    t = pd.DataFrame(rows)
    t["status"], t["run_id"] = "done", [f"r{i}" for i in range(len(t))]
    return t


STATIC = [0.30, 0.32, 0.28, 0.31, 0.29]


@pytest.mark.parametrize(
    ("moving", "train", "verdict"),
    [
        ([0.60, 0.62, 0.58, 0.61, 0.59], 0.01, "reproduced"),
        ([0.31, 0.33, 0.29, 0.30, 0.30], 0.01, "not reproduced"),  # no gain
        ([0.30, 0.70, 0.35, 0.60, 0.40], 0.01, "inconclusive"),  # straddles 0.10
        ([0.60, 0.62, 0.58, 0.61, 0.59], 0.5, "inconclusive"),  # moving arm did not fit
    ],
    ids=["gain", "no-gain", "straddles", "unfit"],
)
def test_move_judge(moving, train, verdict):
    r = CLAIM.evaluate(CLAIM.config("full"), table(moving, STATIC, train))
    assert r.verdict == verdict, r.evidence


def test_judge_is_inconclusive_at_the_floor():
    r = CLAIM.evaluate(CLAIM.config("full"), table([0.01] * 5, [0.0] * 5))
    assert r.verdict == "inconclusive" and "floor" in r.evidence
