"""``nav_return``: the normalised return of a learned model used as a planner on new linear rewards
in the point-mass navigation proxy of GOMs (Zhu et al. 2024, #66).

Every split marked ``meta["episodes"]`` holds episodes (start in ``x[:, :2]``, reward weights in
``meta["w"]``); the protocol (discount, episode and plan lengths, MPC samples) is read from
``TaskInfo.extra["point_nav"]``. The model acts according to its learner:

- ``gom`` (a ``gom_mdn``): every ``every`` steps, the candidate occupancies at the current state
  (the mixture's component means of weight >= 2%) are scored by ``w . psi``; the readout plays
  ``pi(s, psi*)`` for the best at every step until the next choice;
- ``dynamics`` (any regression model of ``(s, a) -> s' - s``): random-shooting MPC over the plan
  length with the learned one-step model, re-planning every ``every`` steps (``genlab.datasets.point_nav.mpc_policy``).

Two references play the same episodes: the same MPC with the true dynamics (``oracle``) and
uniform random actions (``random``). Logs ``return``, ``oracle``, ``random`` (mean discounted
returns) and ``normalised`` = ``(return - random) / (oracle - random)`` per split.
"""

from __future__ import annotations

from functools import partial

import torch
from torch import Tensor, nn

from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import NoParams

MIN_WEIGHT = 0.02


def _gom_act(model: nn.Module, every: int):
    """Every ``every`` steps choose the candidate psi with the largest ``w . psi``; act with the
    readout ``pi(s, psi)`` at every step."""
    dtype = next(model.parameters()).dtype
    held: list[Tensor] = []

    def act(p: Tensor, w: Tensor, t: int) -> Tensor:
        s = p.to(dtype)
        if t % every == 0 or not held:
            mu, weight = model.candidates(s)
            score = (mu.double() * w[:, None]).sum(-1)
            score = score.masked_fill(weight < MIN_WEIGHT, float("-inf"))
            held[:] = [mu[torch.arange(len(p)), score.argmax(1)]]
        return model(torch.cat([s, held[0]], -1)).double().clamp(-1, 1)

    return act


def _dynamics(model: nn.Module):
    dtype = next(model.parameters()).dtype
    return lambda q, a: q + model(torch.cat([q, a], -1).to(dtype)).to(q.dtype)


def _mean_return(act, starts: Tensor, w: Tensor, gamma: float, horizon: int, walls: int) -> Tensor:
    from genlab.datasets.point_nav import episode_return

    return episode_return(act, starts, w, gamma, horizon, walls).mean()


_REFERENCE: dict[tuple, tuple[float, float]] = {}  # (protocol, episodes) -> (oracle, random)


def _references(run, nav: dict, starts: Tensor, w: Tensor, mpc, walls: int) -> tuple[float, float]:
    """The oracle's and the random policy's mean returns, computed once per protocol and episodes
    in a process (both are deterministic: the same numbers every time)."""
    from genlab.datasets.point_nav import random_policy, step

    key = (tuple(sorted(nav.items())), starts.numpy().tobytes(), w.numpy().tobytes())
    if key not in _REFERENCE:
        oracle = run(mpc(lambda q, a: step(q, a, walls))).item()
        if len(_REFERENCE) >= 64:
            _REFERENCE.clear()
        _REFERENCE[key] = (oracle, run(random_policy()).item())
    return _REFERENCE[key]


@PROBES.register("nav_return", NoParams, papers=(66,), family="control")
def nav_return(model: nn.Module, ctx: EvalContext, params: NoParams) -> ProbeResult:
    """Normalised return of a GOM or of MPC with a learned model on new rewards (#66)."""
    nav = ctx.data.info.extra.get("point_nav") if ctx.data.info.extra else None
    if not nav:
        raise SpecError("probe 'nav_return' needs a task of navigation episodes (point_nav)")
    from genlab.datasets.point_nav import mpc_policy

    gamma, horizon, walls = float(nav["gamma"]), int(nav["horizon"]), int(nav["walls"])

    def mpc(dyn):
        return mpc_policy(
            dyn, gamma, int(nav["plan"]), int(nav["samples"]), int(nav["segments"]), every
        )

    every = int(nav["every"])

    if nav["learner"] == "gom":
        if not callable(getattr(model, "candidates", None)):
            raise SpecError("probe 'nav_return' plans with a GOM through candidates(s) (gom_mdn)")
        policy = _gom_act(model, every)
    else:
        policy = mpc(_dynamics(model))
    was_training = model.training
    model.eval()
    out: ProbeResult = {}
    try:
        with torch.inference_mode():
            for name, split in ctx.splits.items():
                if not split.meta.get("episodes"):
                    continue
                starts, w = split.x[:, :2].double(), split.meta["w"].double()
                run = partial(
                    _mean_return, starts=starts, w=w, gamma=gamma, horizon=horizon, walls=walls
                )
                ret = run(policy).item()
                oracle, rand = _references(run, nav, starts, w, mpc, walls)
                out[(name, "return")], out[(name, "oracle")], out[(name, "random")] = (
                    ret,
                    oracle,
                    rand,
                )
                out[(name, "normalised")] = (ret - rand) / max(oracle - rand, 1e-9)
    finally:
        model.train(was_training)
    return out
