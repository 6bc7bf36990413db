"""L-infinity PGD (Madry et al. 2018), the attack of adversarial training and of the robust
accuracy probe: from a uniform random start in the ``eps`` ball, ``steps`` signed-gradient
ascent steps of size ``step_size`` on ``loss(model(x_adv))``, each projected back into the ball
(and the input range [0, 1] when ``clip``). Parameter gradients are left as they were; the random
start draws from ``gen``, so the global RNG never moves."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn


def linf_pgd(
    model: nn.Module,
    x: Tensor,
    loss: Callable[[Tensor], Tensor],
    eps: float,
    steps: int,
    step_size: float | None = None,
    gen: torch.Generator | None = None,
    clip: bool = True,
) -> Tensor:
    """The perturbed inputs (detached) that raise ``loss``; ``step_size`` defaults to
    ``2.5 * eps / steps`` (Madry et al.)."""
    if eps <= 0 or steps < 1:
        return x.detach()
    size = 2.5 * eps / steps if step_size is None else step_size
    start = (torch.rand(x.shape, generator=gen, dtype=x.dtype) * 2 - 1) * eps
    adv = x.detach() + start
    with torch.enable_grad():
        for _ in range(steps):
            adv.requires_grad_(True)
            (g,) = torch.autograd.grad(loss(model(adv)), adv)  # parameter .grad untouched
            adv = adv.detach() + size * g.sign()
            adv = x + (adv - x).clamp(-eps, eps)
            adv = adv.clamp(0, 1) if clip else adv
    return adv.detach()
