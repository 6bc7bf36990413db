"""``point_reach``: behaviour cloning data from a scripted expert reaching targets in a 2D point-mass
environment, with static or moving targets (MOVE, Wang et al. 2025, "MOVE: a simple motion-based
data collection paradigm for spatial generalization in robotic manipulation", #4).

``train/main``: ``n_demos`` demonstrations of ``horizon`` steps each (the environment and the
expert are ``genlab.datasets.point_reach``), observation ``(p, g)`` in, the expert's action out:
the same budget of ``n_demos * horizon`` environment steps whatever ``targets`` is. Episode ``i``
starts from the same agent and target positions in both kinds (drawn from ``data_seed``); with
``targets="moving"`` the target then moves (speed ``Beta(2, 5) * target_speed`` in a random
direction, reflecting off the walls), with ``"static"`` it stays. Demonstration targets start in
``[-0.8, demo_x_max] x [-0.8, 0.8]``, or, with ``sites = K > 0``, cycle through ``K`` fixed sites.

Test splits are episodes to roll out (``meta["episodes"]``; the ``reach_success`` probe plays
them): ``x`` the initial observations, ``y`` the expert's first action. ``test/heldout``:
``n_test`` fresh agent starts and static targets in ``[test_x_min, 0.8] x [-0.8, 0.8]`` (with
``sites``: the sites themselves, targets inside the demonstrations' coverage). ``test/seen``:
fresh starts towards the demonstrations' own initial targets (in both kinds, where the static
demonstrations were).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from pydantic import Field

from genlab.data import Split, TaskData, TaskInfo
from genlab.errors import SpecError
from genlab.registry import Params
from genlab.tasks import TASKS

ROW = 4


class PointReachParams(Params):
    """Params of ``point_reach``."""

    targets: Literal["static", "moving"] = Field("static", description="targets of the demos")
    n_demos: int = Field(8, ge=1, le=10_000, description="demonstrations, each horizon steps")
    horizon: int = Field(30, ge=1, le=1000, description="steps of a demo and of a test episode")
    target_speed: float = Field(0.1, ge=0, le=1, description="largest target speed per step")
    radius: float = Field(0.05, gt=0, le=1, description="success: within radius of the target")
    demo_x_max: float = Field(0.8, gt=-0.8, le=0.8, description="demo targets start at x <= it")
    test_x_min: float = Field(-0.8, ge=-0.8, lt=0.8, description="held-out targets lie at x >= it")
    sites: int = Field(0, ge=0, le=1000, description="0: targets anywhere; K: K fixed sites")
    n_test: int = Field(256, ge=1, le=100_000, description="episodes of each test split")


def _targets(rng: np.random.Generator, n: int, x_lo: float, x_hi: float) -> np.ndarray:
    """``n`` targets in ``[x_lo, x_hi] x [-0.8, 0.8]`` (row by row: the first ``k`` of ``n`` are the
    ``k`` drawn alone)."""
    u = rng.uniform(0, 1, (n, 2))
    return np.stack([x_lo + (x_hi - x_lo) * u[:, 0], -0.8 + 1.6 * u[:, 1]], 1)


def _episodes(starts: np.ndarray, targets: np.ndarray, name: str) -> Split:
    from genlab.datasets.point_reach import expert

    obs = np.concatenate([starts, targets], 1)
    return Split(
        torch.tensor(obs, dtype=torch.float32),
        torch.tensor(expert(obs), dtype=torch.float32),
        {"episodes": True, "targets": name},
    )


@TASKS.register(
    "point_reach",
    PointReachParams,
    papers=(ROW,),
    family="control",
    tiny={"n_demos": 4, "horizon": 10, "n_test": 16},
)
def point_reach(params: PointReachParams, data_seed: int) -> TaskData:
    """Static- or moving-target reaching demonstrations, and held-out episodes (#4)."""
    try:
        from genlab.datasets.point_reach import demos
    except ImportError as exc:  # gymnasium is the optional 'control' extra
        raise SpecError(
            f"task point_reach needs gymnasium: pip install 'genlab[control]' ({exc})"
        ) from None
    n, s = params.n_demos, data_seed
    starts = np.random.default_rng([s, ROW, 0]).uniform(-1, 1, (n, 2))
    if params.sites:
        sites = _targets(np.random.default_rng([s, ROW, 3]), params.sites, -0.8, params.demo_x_max)
        goals = sites[np.arange(n) % params.sites]
    else:
        goals = _targets(np.random.default_rng([s, ROW, 1]), n, -0.8, params.demo_x_max)
    speed = params.target_speed if params.targets == "moving" else 0.0
    obs, act = demos(n, params.horizon, speed, starts, goals, np.random.default_rng([s, ROW, 2]))
    test = np.random.default_rng([s, ROW, 4])
    m = params.n_test
    test_starts = test.uniform(-1, 1, (m, 2))
    if params.sites:
        heldout = sites[np.arange(m) % params.sites]
    else:
        heldout = _targets(test, m, params.test_x_min, 0.8)
    seen_starts = test.uniform(-1, 1, (m, 2))
    info = TaskInfo(
        kind="regression",
        n_outputs=2,
        input_shape=(4,),
        extra={
            "point_reach": {"horizon": params.horizon, "radius": params.radius},
            "env_steps": int(len(obs)),
        },
    )
    train = Split(
        torch.tensor(obs, dtype=torch.float32),
        torch.tensor(act, dtype=torch.float32),
        {"targets": params.targets},
    )
    tests = {
        "heldout": _episodes(test_starts, heldout, "heldout"),
        "seen": _episodes(seen_starts, goals[np.arange(m) % n], "seen"),
    }
    return TaskData({"main": train}, {}, tests, info)
