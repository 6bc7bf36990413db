"""Weight-space operations on plain state dicts: interpolation, averages, soups, BN re-estimation.

- ``interpolate(a, b, lam)``: ``(1 - lam) * a + lam * b``, WiSE-FT's ``theta(alpha)`` with ``a`` the
  pre-trained and ``b`` the fine-tuned weights (Wortsman et al. 2022; Lin et al., #16).
- ``average(states, weights)``: a weighted mean; ``uniform_soup`` is its uniform case (Wortsman et
  al., "Model soups", 2022), as are ratatouille's and DiWA's final models (Rame et al., #102).
- ``greedy_soup``: ingredients in decreasing order of held-out accuracy, each kept when the soup's
  held-out accuracy does not fall (Wortsman et al. 2022, Algorithm 1).
- ``recompute_bn``: batch-norm running statistics re-estimated on data, the fix for averaged
  networks' stale statistics (Izmailov et al., SWA, 2018).

Integer buffers (e.g. BatchNorm's ``num_batches_tracked``) are taken from the first state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor, nn

State = dict[str, Tensor]


def average(states: Sequence[State], weights: Sequence[float] | None = None) -> State:
    """``sum_i w_i * state_i`` for floating tensors (``w`` uniform by default, normalised)."""
    if not states:
        raise ValueError("average needs at least one state")
    w = torch.tensor(weights if weights is not None else [1.0] * len(states), dtype=torch.float64)
    if len(w) != len(states) or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"weights must be {len(states)} non-negative numbers, not all zero")
    w = w / w.sum()
    out: State = {}
    for key, ref in states[0].items():
        if not ref.is_floating_point():
            out[key] = ref.clone()
            continue
        acc = torch.zeros_like(ref, dtype=torch.float64)
        for wi, st in zip(w.tolist(), states, strict=True):
            acc += wi * st[key].to(torch.float64)
        out[key] = acc.to(ref.dtype)
    return out


def interpolate(a: State, b: State, lam: float) -> State:
    """``(1 - lam) * a + lam * b`` (``lam`` may leave [0, 1] to extrapolate)."""
    out: State = {}
    for key, va in a.items():
        out[key] = torch.lerp(va, b[key].to(va.dtype), lam) if va.is_floating_point() else va
    return out


def uniform_soup(states: Sequence[State]) -> State:
    """The plain mean of the ingredients' weights."""
    return average(states)


def greedy_soup(
    states: Sequence[State], score: Callable[[State], float]
) -> tuple[State, list[int]]:
    """Greedy soup: sort by ``score`` (held-out accuracy, higher is better), start from the best,
    add each next ingredient if the soup's score does not fall. Returns the soup and the indices
    kept, in the order they were added."""
    order = sorted(range(len(states)), key=lambda i: -score(states[i]))
    kept = [order[0]]
    best = score(states[order[0]])
    for i in order[1:]:
        candidate = average([states[j] for j in [*kept, i]])
        s = score(candidate)
        if s >= best:
            kept, best = [*kept, i], s
    return average([states[j] for j in kept]), kept


@torch.no_grad()
def recompute_bn(model: nn.Module, x: Tensor, batch_size: int = 256) -> bool:
    """Reset every BatchNorm's running statistics and re-estimate them as a cumulative mean over
    ``x`` in train mode (weights untouched). Returns whether the model had any BatchNorm."""
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return False
    saved = [(m, m.momentum) for m in norms]
    was = model.training
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # cumulative moving average
    model.train()
    for i in range(0, len(x), batch_size):
        model(x[i : i + batch_size])
    for m, mom in saved:
        m.momentum = mom
    model.train(was)
    return True
