"""A 2D point mass among walls, RBF features, offline behaviour data and the planners of the GOM
proxy (generalized occupancy models, Zhu et al. 2024, #66). Pure torch (no gymnasium).

The agent sits at ``p`` in ``[-1, 1]²``; an action ``a ∈ [-1, 1]²`` moves it to
``clip(p + STEP * a)``, except that a move crossing a wall segment keeps its ``x`` (the agent
slides along the wall). ``walls`` 0: open arena; 1: one wall at ``x = 0`` from the bottom to
``y = 0.4``; 2: an S-shaped maze (``x = -0.35``, ``y <= 0.4`` and ``x = 0.35``, ``y >= -0.4``).
Features ``phi(p)``: Gaussian bumps (width ``SIGMA``) on a 5 x 5 grid of centres in
``[-0.8, 0.8]²``; a reward is ``r(p) = w . phi(p)``.

``behaviour`` draws the offline data: trajectories whose heading takes a Gaussian random walk
(full speed times ``U(0.3, 1)``), from starts uniform in the box. ``occupancy`` turns a
trajectory's features into ``psi_t = (1 - gamma) sum_j gamma^j phi(p_{t+j})`` (Monte Carlo,
truncated at the trajectory's end). ``episode_return`` plays a policy on a batch of episodes;
``mpc_policy`` is random-shooting MPC over piecewise-constant action sequences with any one-step
model (the true ``step`` for the oracle).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

STEP = 0.1
BOX = 1.0
SIGMA = 0.3
GRID = 5
WALLS: dict[int, tuple[tuple[float, float, float], ...]] = {
    0: (),
    1: ((0.0, -1.0, 0.4),),
    2: ((-0.35, -1.0, 0.4), (0.35, -0.4, 1.0)),
}  # (x, y_lo, y_hi) of each vertical wall segment

# (positions (n, 2), reward weights (n, F), step t) -> actions (n, 2); a policy re-plans when
# t % every == 0 and follows its plan in between
Act = Callable[[Tensor, Tensor, int], Tensor]


def centres() -> Tensor:
    """The ``GRID²`` feature centres, row-major, shape ``(25, 2)``."""
    g = torch.linspace(-0.8, 0.8, GRID, dtype=torch.float64)
    return torch.cartesian_prod(g, g)


def phi(p: Tensor) -> Tensor:
    """RBF features of positions ``(..., 2)`` -> ``(..., 25)``."""
    c = centres().to(p.dtype)
    return torch.exp(-((p[..., None, :] - c) ** 2).sum(-1) / (2 * SIGMA**2))


def step(p: Tensor, a: Tensor, walls: int) -> Tensor:
    """The true dynamics on ``(..., 2)``: clipped move, ``x`` blocked by a crossed wall."""
    q = (p + STEP * a.clamp(-1, 1)).clamp(-BOX, BOX)
    for wx, lo, hi in WALLS[walls]:
        px, qx = p[..., 0], q[..., 0]
        cross = ((px - wx) * (qx - wx) < 0) | (qx == wx)
        t = ((wx - px) / torch.where(qx == px, torch.ones_like(px), qx - px)).clamp(0, 1)
        y = p[..., 1] + t * (q[..., 1] - p[..., 1])
        block = cross & (y >= lo) & (y <= hi)
        q = torch.stack([torch.where(block, px, qx), q[..., 1]], -1)
    return q


def behaviour(n: int, length: int, walls: int, gen: torch.Generator, turn: float = 0.6):
    """``n`` trajectories of ``length`` steps of the random-heading behaviour policy: positions
    ``(n, length + 1, 2)`` and actions ``(n, length, 2)`` (float64)."""
    p = torch.rand(n, 2, generator=gen, dtype=torch.float64) * 2 - 1
    theta = torch.rand(n, generator=gen, dtype=torch.float64) * 2 * math.pi
    ps, acts = [p], []
    for _ in range(length):
        speed = 0.3 + 0.7 * torch.rand(n, generator=gen, dtype=torch.float64)
        a = speed[:, None] * torch.stack([theta.cos(), theta.sin()], -1)
        p = step(p, a, walls)
        ps.append(p)
        acts.append(a)
        theta = theta + turn * torch.randn(n, generator=gen, dtype=torch.float64)
    return torch.stack(ps, 1), torch.stack(acts, 1)


def occupancy(features: Tensor, gamma: float) -> Tensor:
    """``(1 - gamma) sum_j gamma^j f_{t+j}`` along dim 1 of ``(n, T, F)`` (truncated at ``T``)."""
    out = torch.zeros_like(features)
    acc = torch.zeros_like(features[:, 0])
    for t in range(features.shape[1] - 1, -1, -1):
        acc = features[:, t] + gamma * acc
        out[:, t] = acc
    return (1 - gamma) * out


def window(gamma: float) -> int:
    """Steps after which ``gamma^k`` is below 1%: the psi targets need this many future steps."""
    return math.ceil(math.log(0.01) / math.log(gamma))


def episode_return(
    act: Act, starts: Tensor, w: Tensor, gamma: float, horizon: int, walls: int
) -> Tensor:
    """Discounted return ``sum_{t < horizon} gamma^t w . phi(p_t)`` of each episode."""
    p, ret = starts.double(), torch.zeros(len(starts), dtype=torch.float64)
    w = w.double()
    for t in range(horizon):
        ret += gamma**t * (phi(p) * w).sum(-1)
        p = step(p, act(p, w, t).double(), walls)
    return ret


def mpc_policy(
    model: Callable[[Tensor, Tensor], Tensor],
    gamma: float,
    plan: int,
    samples: int,
    segments: int,
    every: int = 1,
    seed: int = 0,
) -> Act:
    """Random-shooting MPC: every ``every`` steps, ``samples`` sequences of ``plan`` actions per
    episode (``segments`` pieces of a constant full-speed action in a random direction, plus
    standing still), rolled through ``model(p, a) -> p'`` (float32), scored by their discounted
    reward; the first ``every`` actions of the best are played. Deterministic given ``seed``."""
    gen = torch.Generator().manual_seed(seed)
    seg = torch.arange(plan) * segments // plan  # the piece each planning step belongs to
    chosen: list[Tensor] = []

    def act(p: Tensor, w: Tensor, t: int) -> Tensor:
        if t % every == 0 or not chosen:
            chosen[:] = [best_sequence(p, w)]
        return chosen[0][:, min(t % every, plan - 1)]

    def best_sequence(p: Tensor, w: Tensor) -> Tensor:
        n = len(p)
        ang = torch.rand(n, samples, segments, generator=gen, dtype=torch.float64) * 2 * math.pi
        seqs = torch.stack([ang.cos(), ang.sin()], -1)[:, :, seg]  # (n, K, plan, 2)
        seqs[:, 0] = 0.0  # standing still is always a candidate
        q = p[:, None].expand(n, samples, 2).float()
        value = torch.zeros(n, samples)
        wf, flat = w[:, None].float(), seqs.float()
        for h in range(plan):
            value += gamma**h * (phi(q) * wf).sum(-1)
            q = model(q.reshape(-1, 2), flat[:, :, h].reshape(-1, 2)).reshape(n, samples, 2)
        best = value.argmax(1)
        return seqs[torch.arange(n), best].double()

    return act


def random_policy(seed: int = 0) -> Act:
    """Uniform actions in ``[-1, 1]²`` (the lower anchor of the normalised return)."""
    gen = torch.Generator().manual_seed(seed)
    return lambda p, w, t: torch.rand(len(p), 2, generator=gen, dtype=torch.float64) * 2 - 1
