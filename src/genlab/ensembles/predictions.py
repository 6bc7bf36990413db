"""Ensembles of predictive distributions: averaging, and linear interpolation fitted by EM.

Herel & Mikolov (catalogue #69) propose publishing every model's per-token probabilities on dev
and test so that a new model's worth is its contribution to a linear interpolation
``p(w) = sum_m lambda_m p_m(w)`` whose weights are tuned on dev. For a mixture the weights that
maximise dev likelihood are found by EM (Jelinek & Mercer 1980): with ``P[m, i]`` the probability
model ``m`` gives the ``i``-th dev token,

    r[m, i] = lambda_m P[m, i] / sum_k lambda_k P[k, i];   lambda_m <- mean_i r[m, i]

which never decreases the dev likelihood. ``perplexity`` is ``exp`` of the mean negative log
probability.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


def em_weights(p: Tensor, iters: int = 200, tol: float = 1e-9) -> Tensor:
    """Mixture weights ``(M,)`` maximising ``mean_i log sum_m w_m p[m, i]`` for ``p (M, N)``."""
    p = p.double().clamp_min(1e-300)
    w = torch.full((p.shape[0],), 1.0 / p.shape[0], dtype=torch.float64)
    last = -float("inf")
    for _ in range(iters):
        mix = w @ p
        ll = mix.log().mean().item()
        w = (w[:, None] * p / mix).mean(dim=1)
        if ll - last < tol:
            break
        last = ll
    return w / w.sum()


def mixture(p: Tensor, w: Tensor) -> Tensor:
    """``sum_m w_m p[m, i]`` per token."""
    return w.double() @ p.double()


def perplexity(p_true: Tensor) -> float:
    """``exp(-mean log p)`` of the probabilities given to the observed tokens."""
    return float(torch.exp(-p_true.double().clamp_min(1e-300).log().mean()))


@torch.no_grad()
def target_probs(model: nn.Module, x: Tensor, y: Tensor, chunk: int = 1024) -> Tensor:
    """The probability ``model`` gives each target (sequence tasks: every position, flattened in
    row order; positions marked ``-100`` dropped)."""
    was = model.training
    model.eval()
    out = []
    for i in range(0, len(x), chunk):
        logp = torch.log_softmax(model(x[i : i + chunk]).double(), dim=-1)
        yy = y[i : i + chunk]
        keep = yy != -100
        out.append(logp.gather(-1, yy.clamp_min(0).unsqueeze(-1)).squeeze(-1)[keep].exp())
    model.train(was)
    return torch.cat(out)
