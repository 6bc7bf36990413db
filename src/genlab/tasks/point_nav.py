"""``point_nav``: offline data of a 2D point mass among walls, for a generalized occupancy model or
a one-step dynamics model, and test episodes with new linear rewards (GOMs, Zhu et al. 2024, #66).

The same behaviour trajectories (``n_traj`` x ``length`` steps of a random-heading policy,
``genlab.datasets.point_nav``; drawn from ``data_seed``) feed either learner:

- ``learner="gom"``: ``x = (s, psi)`` with ``psi`` the Monte Carlo discounted feature occupancy
  ``(1 - gamma) sum_j gamma^j phi(s_{t+j})`` from ``s = s_t`` (only steps with at least
  ``window(gamma)`` future steps), ``y = a_t``: a model learns ``p(psi | s)`` and the readout
  ``pi(a | s, psi)``;
- ``learner="dynamics"``: ``x = (s, a)``, ``y = s' - s`` for every transition.

Test split ``episodes``: ``n_rewards`` rewards ``w`` (each a bump on one random feature centre,
never seen in training) times ``n_starts`` starts uniform in the box; ``x`` holds the start in its
first two entries (zeros after), ``meta["w"]`` the reward weights, ``y`` the rewarded centre.
``info.extra["point_nav"]`` carries the evaluation protocol for the ``nav_return`` probe:
discount, episode length ``ceil(3 / (1 - gamma))``, plan length ``ceil(2 / (1 - gamma))``, re-planning
every ``ceil(0.25 / (1 - gamma))`` steps (2 at gamma 0.8, 5 at 0.95).
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.tasks import TASKS

ROW = 66


class PointNavParams(Params):
    """Params of ``point_nav``."""

    learner: Literal["gom", "dynamics"] = Field("gom", description="what the data trains")
    walls: int = Field(1, ge=0, le=2, description="0 open, 1 one wall, 2 an S-shaped maze")
    gamma: float = Field(0.9, gt=0, lt=1, description="discount of psi and of the returns")
    n_traj: int = Field(200, ge=1, le=100_000, description="behaviour trajectories")
    length: int = Field(150, ge=2, le=10_000, description="steps of each trajectory")
    n_rewards: int = Field(10, ge=1, le=25, description="new rewards at test time")
    n_starts: int = Field(6, ge=1, le=10_000, description="episodes per reward")
    samples: int = Field(64, ge=2, le=10_000, description="MPC action sequences per step")
    segments: int = Field(4, ge=1, le=100, description="constant pieces of an MPC sequence")

    @model_validator(mode="after")
    def _long_enough(self) -> PointNavParams:
        from genlab.datasets.point_nav import window

        if self.length <= window(self.gamma):
            raise ValueError(
                f"length {self.length} must exceed the psi window "
                f"{window(self.gamma)} steps of gamma {self.gamma}"
            )
        return self


@TASKS.register(
    "point_nav",
    PointNavParams,
    papers=(ROW,),
    family="control",
    tiny={"n_traj": 4, "length": 40, "gamma": 0.8, "n_rewards": 2, "n_starts": 2, "samples": 4},
)
def point_nav(params: PointNavParams, data_seed: int) -> TaskData:
    """Offline point-mass data for a GOM or a dynamics model, and new-reward episodes (#66)."""
    from genlab.datasets.point_nav import behaviour, centres, occupancy, phi, window

    gen = torch.Generator().manual_seed(data_seed * 1000 + ROW)
    pos, act = behaviour(params.n_traj, params.length, params.walls, gen)
    if params.learner == "gom":
        keep = params.length - window(params.gamma) + 1
        psi = occupancy(phi(pos[:, :-1]), params.gamma)[:, :keep]
        x = torch.cat([pos[:, :keep], psi], -1).reshape(-1, 2 + psi.shape[-1])
        y = act[:, :keep].reshape(-1, 2)
    else:
        x = torch.cat([pos[:, :-1], act], -1).reshape(-1, 4)
        y = (pos[:, 1:] - pos[:, :-1]).reshape(-1, 2)
    test = torch.Generator().manual_seed(data_seed * 1000 + ROW + 1)
    goal = torch.randperm(len(centres()), generator=test)[: params.n_rewards]
    goal = goal.repeat_interleave(params.n_starts)
    w = torch.nn.functional.one_hot(goal, len(centres())).double()
    starts = torch.rand(len(goal), 2, generator=test, dtype=torch.float64) * 2 - 1
    xs = torch.zeros(len(goal), x.shape[1], dtype=torch.float64)
    xs[:, :2] = starts
    episodes = Split(xs.float(), centres()[goal].float(), {"episodes": True, "w": w})
    gamma = params.gamma
    steps = lambda k: math.ceil(round(k / (1 - gamma), 6))  # noqa: E731  (no float fuzz)
    info = TaskInfo(
        kind="regression",
        n_outputs=2,
        input_shape=(x.shape[1],),
        extra={
            "point_nav": {
                "learner": params.learner,
                "walls": params.walls,
                "gamma": gamma,
                "horizon": steps(3),
                "plan": steps(2),
                "every": steps(0.25),
                "samples": params.samples,
                "segments": params.segments,
            },
            "env_steps": params.n_traj * params.length,
        },
    )
    train = Split(x.float(), y.float(), {"learner": params.learner})
    return TaskData({"main": train}, {}, {"episodes": episodes}, info)
