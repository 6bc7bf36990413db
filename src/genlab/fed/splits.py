"""Client splits of a classification task's training data: label, quantity and feature skew.

The heterogeneity protocols of federated learning benchmarks, as used by FedImpro (Tang et al. 2024,
#1) and FedLoG (Kim et al. 2024, #78): *label skew* draws each class's share of every client from
Dirichlet(alpha) (Hsu et al. 2019; small alpha -> near one-class clients, alpha -> inf -> IID);
*quantity skew* draws each client's size from Dirichlet(alpha) with IID labels; *feature skew*
gives each client one training environment of a domain-shift task (clients cycle over the
environments). Every split is a function of the labels (or environments) and a seeded generator.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from torch import Tensor

Skew = Literal["label", "quantity", "feature", "iid"]


def _dirichlet(alpha: float, k: int, n: int, gen: torch.Generator) -> Tensor:
    """``n`` draws from a symmetric Dirichlet(alpha) on ``k`` parts, seeded from ``gen``."""
    seed = int(torch.randint(0, 2**62, (1,), generator=gen))
    draws = np.random.default_rng(seed).dirichlet([float(alpha)] * k, size=n)
    return torch.from_numpy(np.nan_to_num(draws, nan=1.0 / k))


def _cut(idx: Tensor, shares: Tensor) -> list[Tensor]:
    """Cut ``idx`` into consecutive pieces proportional to ``shares``."""
    bounds = (shares.cumsum(0) * len(idx)).round().long().tolist()
    starts = [0, *bounds[:-1]]
    return [idx[a:b] for a, b in zip(starts, bounds, strict=True)]


def label_skew(
    y: Tensor, n_clients: int, alpha: float, gen: torch.Generator, min_size: int = 2
) -> list[Tensor]:
    """Dirichlet(alpha) label skew: for each class, its examples are shared among the clients in
    proportions drawn from Dirichlet(alpha). Redrawn (up to 100 times) until every client holds at
    least ``min_size`` examples, as in the common FL benchmark code."""
    classes = torch.unique(y)
    for _ in range(100):
        parts: list[list[Tensor]] = [[] for _ in range(n_clients)]
        props = _dirichlet(alpha, n_clients, len(classes), gen)
        for c, p in zip(classes.tolist(), props, strict=True):
            idx = torch.nonzero(y == c).flatten()
            idx = idx[torch.randperm(len(idx), generator=gen)]
            for i, piece in enumerate(_cut(idx, p)):
                parts[i].append(piece)
        out = [torch.cat(p).sort().values for p in parts]
        if min(len(p) for p in out) >= min_size:
            return out
    raise ValueError(
        f"fed.alpha={alpha}: no Dirichlet split gave every one of {n_clients} clients "
        f">= {min_size} examples of {len(y)}; use fewer clients or a larger alpha"
    )


def quantity_skew(n: int, n_clients: int, alpha: float, gen: torch.Generator) -> list[Tensor]:
    """Quantity skew: client sizes from Dirichlet(alpha) (at least 2 each), labels IID."""
    if n < 2 * n_clients:
        raise ValueError(f"fed.clients={n_clients}: {n} examples cannot give each client 2")
    shares = _dirichlet(alpha, n_clients, 1, gen)[0]
    sizes = 2 + (shares * (n - 2 * n_clients)).floor().long()
    sizes[-1] += n - int(sizes.sum())
    perm = torch.randperm(n, generator=gen)
    return [p.sort().values for p in torch.split(perm, sizes.tolist())]


def iid(n: int, n_clients: int, gen: torch.Generator) -> list[Tensor]:
    """Equal-sized IID clients."""
    perm = torch.randperm(n, generator=gen)
    return [p.sort().values for p in perm.tensor_split(n_clients)]


def feature_skew(env: Tensor, n_clients: int, gen: torch.Generator) -> list[Tensor]:
    """Feature skew from environments: client ``i`` holds a share of environment ``i mod E``'s
    examples (``env`` gives each example's environment index, 0..E-1)."""
    n_envs = int(env.max()) + 1
    if n_clients < n_envs:
        raise ValueError(f"fed.clients={n_clients}: feature skew needs >= {n_envs} (one per env)")
    out: list[Tensor] = [torch.empty(0, dtype=torch.long)] * n_clients
    for e in range(n_envs):
        owners = list(range(e, n_clients, n_envs))
        idx = torch.nonzero(env == e).flatten()
        idx = idx[torch.randperm(len(idx), generator=gen)]
        for i, piece in zip(owners, idx.tensor_split(len(owners)), strict=True):
            out[i] = piece.sort().values
    return out


def split_clients(
    skew: Skew, y: Tensor, env: Tensor, n_clients: int, alpha: float, seed: int
) -> list[Tensor]:
    """Indices of each client's examples under ``skew``, drawn from ``seed`` alone."""
    gen = torch.Generator().manual_seed(seed)
    if skew == "label":
        return label_skew(y, n_clients, alpha, gen)
    if skew == "quantity":
        return quantity_skew(len(y), n_clients, alpha, gen)
    if skew == "feature":
        return feature_skew(env, n_clients, gen)
    return iid(len(y), n_clients, gen)


def label_histograms(y: Tensor, parts: list[Tensor], n_classes: int) -> Tensor:
    """Each client's label distribution (clients x classes, rows sum to 1)."""
    h = torch.stack([torch.bincount(y[p], minlength=n_classes).double() for p in parts])
    return h / h.sum(1, keepdim=True).clamp_min(1)
