"""Federated probes: client-update dissimilarity and per-client accuracy summaries.

FedImpro (Tang et al. 2024, #1) measures client drift as the dissimilarity of the clients'
gradients; here, per round, the mean over client pairs of ``1 - cos(Δ_i, Δ_j)``, where
``Δ_i = w_i - w_global`` is client i's whole local update (0: all clients move alike).
"""

from __future__ import annotations

import math

import torch


def flat_update(local: dict[str, torch.Tensor], global_: dict[str, torch.Tensor]) -> torch.Tensor:
    """A client's update ``w_i - w_global``, flattened over the floating-point arrays."""
    keys = [k for k, v in global_.items() if v.is_floating_point()]
    return torch.cat([(local[k].double() - global_[k].double()).flatten() for k in keys])


def update_dissimilarity(updates: list[torch.Tensor]) -> float:
    """Mean pairwise cosine dissimilarity ``1 - cos`` of the updates (NaN for fewer than two)."""
    if len(updates) < 2:
        return math.nan
    u = torch.stack(updates)
    u = u / u.norm(dim=1, keepdim=True).clamp_min(1e-12)
    cos = u @ u.T
    n = len(updates)
    off = (cos.sum() - cos.diagonal().sum()) / (n * (n - 1))
    return float(1 - off)


def client_summary(acc: dict[int, float], n_train: int) -> dict[tuple[str, str], float]:
    """Per-client accuracies as metrics: ``client/i``, their mean and worst over training
    clients, and the mean over held-out clients (partition ids >= ``n_train``)."""
    out = {(f"client/{i}", "accuracy"): a for i, a in sorted(acc.items())}
    train = [a for i, a in acc.items() if i < n_train and not math.isnan(a)]
    held = [a for i, a in acc.items() if i >= n_train and not math.isnan(a)]
    if train:
        out[("fed", "client_acc_mean")] = sum(train) / len(train)
        out[("fed", "client_acc_worst")] = min(train)
    if held:
        out[("fed", "heldout_clients_acc")] = sum(held) / len(held)
    return out
