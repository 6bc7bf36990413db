"""``gom_mdn``: a generalized occupancy model for the point-mass proxy of GOMs (Zhu et al. 2024,
#66): a mixture-density network ``p(psi | s)`` over the discounted feature occupancy ``psi`` that
the data's behaviour reaches from state ``s``, and a readout policy ``pi(a | s, psi)``.

Input ``x = (s, psi)`` (``point_nav`` with ``learner="gom"``). ``forward(x)`` is the readout
(tanh MLP -> action); ``nll(x)`` the mixture's negative log-likelihood of ``psi`` given ``s`` per
feature (``components`` diagonal Gaussians, tanh MLP trunk), trained together by the ``gom``
method. ``candidates(s)`` returns the component means and weights: the planner (probe
``nav_return``) picks the mean maximising ``w . psi`` among components of weight >= 2% and acts
with the readout. Params: ``width``, ``components``.
"""

from __future__ import annotations

import math

from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params

STATE = 2


class GomMDNParams(Params):
    """Params of ``gom_mdn``."""

    width: int = Field(128, ge=1, le=4096, description="units of each hidden layer")
    components: int = Field(16, ge=1, le=256, description="mixture components of p(psi | s)")


def _mlp(d_in: int, width: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(d_in, width),
        nn.Tanh(),
        nn.Linear(width, width),
        nn.Tanh(),
        nn.Linear(width, d_out),
    )


class GomMDN(nn.Module):
    """Mixture density ``p(psi | s)`` and readout ``pi(a | s, psi)``."""

    def __init__(self, p: GomMDNParams, features: int, actions: int) -> None:
        super().__init__()
        self.k, self.f = p.components, features
        self.density = _mlp(STATE, p.width, p.components * (1 + 2 * features))
        self.readout = _mlp(STATE + features, p.width, actions)

    def forward(self, x: Tensor) -> Tensor:
        return self.readout(x)

    def mixture(self, s: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Log-weights ``(n, K)``, means and log-scales ``(n, K, F)`` at states ``s``."""
        out = self.density(s)
        logits, rest = out[:, : self.k], out[:, self.k :].reshape(len(s), self.k, 2, self.f)
        return logits.log_softmax(-1), rest[:, :, 0], rest[:, :, 1].clamp(-7.0, 2.0)

    def nll(self, x: Tensor) -> Tensor:
        """Mean negative log-likelihood of ``psi`` given ``s``, per feature."""
        s, psi = x[:, :STATE], x[:, STATE:]
        logw, mu, logsig = self.mixture(s)
        z = (psi[:, None] - mu) / logsig.exp()
        comp = (-0.5 * z**2 - logsig - 0.5 * math.log(2 * math.pi)).sum(-1)
        return -(logw + comp).logsumexp(-1).mean() / self.f

    def candidates(self, s: Tensor) -> tuple[Tensor, Tensor]:
        """Component means ``(n, K, F)`` and weights ``(n, K)`` at states ``s``."""
        logw, mu, _ = self.mixture(s)
        return mu, logw.exp()


@MODELS.register(
    "gom_mdn", GomMDNParams, papers=(66,), family="control", tiny={"width": 8, "components": 2}
)
def gom_mdn(params: GomMDNParams, info: TaskInfo) -> nn.Module:
    """Mixture-density occupancy model and readout policy (#66)."""
    nav = info.extra.get("point_nav") if info.extra else None
    if not nav or nav.get("learner") != "gom" or not info.input_shape:
        raise ValueError(
            "gom_mdn reads (state, occupancy) pairs: a point_nav task with learner='gom'"
        )
    return GomMDN(params, math.prod(info.input_shape) - STATE, info.n_outputs)
