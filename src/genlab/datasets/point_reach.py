"""A 2D point-mass reaching environment on gymnasium's ``Env`` API, its scripted expert, and
demonstrations with static or moving targets (the toy stand-in for MOVE, Wang et al. 2025, #4).

The agent sits at ``p`` in the box ``[-1, 1]²``; an action ``a ∈ [-1, 1]²`` moves it by
``STEP * a`` (clipped to the box). The observation is ``(p, g)``, the agent's and the target's
positions. An episode succeeds once ``|p - g| < radius``. The scripted ``expert`` steps straight at
the target, at full speed when far and exactly onto it when closer than one step:
``a = (g - p) / max(|g - p|, STEP)``.

With ``target_speed > 0`` the target moves during the episode (MOVE's "motion injected into movable
objects"), as in the official Meta-World wrapper (``metaworld_wrapper_move.py``): per episode a
speed ``v = Beta(2, 5) * target_speed`` and a direction ``d ~ U[-1, 1]²`` (not normalised),
``g += v d`` each step; here the target reflects off the walls of the box. An evaluation episode
has a static target.

``PointReachEnv`` is the gymnasium environment (one episode at a time, used to collect the
demonstrations); ``rollout`` runs a policy on many static-target episodes at once with the same
dynamics (``move``), in torch, for evaluation. Only this module imports gymnasium; genlab imports
without it (``pip install 'genlab[control]'``).
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from torch import Tensor

STEP = 0.1  # the distance one full action moves the agent
BOX = 1.0  # the workspace is [-BOX, BOX]²


def move(p: np.ndarray, a: np.ndarray) -> np.ndarray:
    """The agent's next position: ``clip(p + STEP * clip(a, -1, 1), -BOX, BOX)``."""
    return np.clip(p + STEP * np.clip(a, -1.0, 1.0), -BOX, BOX)


def expert(obs: np.ndarray) -> np.ndarray:
    """The scripted expert on observations ``(..., 4)``: straight at the target,
    ``(g - p) / max(|g - p|, STEP)`` (norm at most 1, so within the action box)."""
    delta = obs[..., 2:4] - obs[..., 0:2]
    dist = np.linalg.norm(delta, axis=-1, keepdims=True)
    return delta / np.maximum(dist, STEP)


class PointReachEnv(gym.Env):
    """2D point-mass reaching (gymnasium ``Env``): observation ``(p, g)`` in ``[-1, 1]⁴``, action
    in ``[-1, 1]²``, reward ``-|p - g|``, terminated on reaching the target (``radius``),
    truncated after ``horizon`` steps. ``reset(options={"agent": p, "target": g, "velocity":
    u})`` places them (defaults: agent uniform in the box, target uniform in ``[-0.8, 0.8]²``,
    velocity from ``target_speed`` as in the module docstring). ``terminate=False`` keeps an
    episode running after success (a demonstration of fixed length)."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        radius: float = 0.05,
        horizon: int = 30,
        target_speed: float = 0.0,
        terminate: bool = True,
    ) -> None:
        super().__init__()
        self.radius, self.horizon, self.target_speed = radius, horizon, target_speed
        self.terminate = terminate
        self.observation_space = spaces.Box(-BOX, BOX, (4,), np.float64)
        self.action_space = spaces.Box(-1.0, 1.0, (2,), np.float64)

    def _obs(self) -> np.ndarray:
        return np.concatenate([self.p, self.g])

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        o = options or {}
        rng = self.np_random
        self.p = np.asarray(o.get("agent", rng.uniform(-BOX, BOX, 2)), dtype=np.float64)
        self.g = np.asarray(o.get("target", rng.uniform(-0.8, 0.8, 2)), dtype=np.float64)
        if "velocity" in o:
            self.u = np.asarray(o["velocity"], dtype=np.float64)
        else:
            self.u = rng.beta(2, 5) * self.target_speed * rng.uniform(-1, 1, 2)
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        self.p = move(self.p, np.asarray(action, dtype=np.float64))
        g = self.g + self.u  # the target moves (reflecting off the walls)
        out = np.abs(g) > BOX
        self.u = np.where(out, -self.u, self.u)
        self.g = np.where(out, np.sign(g) * 2 * BOX - g, g)
        self.t += 1
        dist = float(np.linalg.norm(self.p - self.g))
        success = dist < self.radius
        return (
            self._obs(),
            -dist,
            success and self.terminate,
            self.t >= self.horizon,
            {"success": success},
        )


def demos(
    n: int,
    horizon: int,
    target_speed: float,
    starts: np.ndarray,
    targets: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` expert demonstrations of ``horizon`` steps each (``n * horizon`` pairs of observation
    and expert action), episode ``i`` from ``starts[i]`` towards ``targets[i]``; with
    ``target_speed`` the target moves (velocity drawn from ``rng``)."""
    env = PointReachEnv(horizon=horizon, target_speed=target_speed, terminate=False)
    obs_all, act_all = [], []
    for i in range(n):
        u = rng.beta(2, 5) * target_speed * rng.uniform(-1, 1, 2)
        obs, _ = env.reset(options={"agent": starts[i], "target": targets[i], "velocity": u})
        for _ in range(horizon):
            a = expert(obs)
            obs_all.append(obs)
            act_all.append(a)
            obs, _, _, truncated, _ = env.step(a)
            if truncated:
                break
    return np.asarray(obs_all), np.asarray(act_all)


def rollout(
    policy: Callable[[Tensor], Tensor], starts: Tensor, horizon: int, radius: float
) -> Tensor:
    """Success (1.0 or 0.0) of ``policy`` on each static-target episode, all at once: ``starts``
    holds the initial observations ``(p, g)``; an episode succeeds if the agent comes within
    ``radius`` of its target in at most ``horizon`` steps (the dynamics of ``move``)."""
    p, g = starts[:, :2].clone(), starts[:, 2:4]
    done = torch.zeros(len(starts), dtype=torch.bool)
    for _ in range(horizon):
        a = policy(torch.cat([p, g], 1)).to(p.dtype).clamp(-1.0, 1.0)
        p = torch.where(done[:, None], p, (p + STEP * a).clamp(-BOX, BOX))
        done |= (p - g).norm(dim=1) < radius
    return done.to(torch.float64)


__all__ = ["BOX", "STEP", "PointReachEnv", "demos", "expert", "move", "rollout"]
