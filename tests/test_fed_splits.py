"""Client splits: Dirichlet label skew follows alpha, quantity and feature skew, determinism."""

from __future__ import annotations

import torch

from genlab.fed.splits import label_histograms, split_clients


def _labels(n_per_class: int = 100, k: int = 10) -> torch.Tensor:
    return torch.arange(k).repeat_interleave(n_per_class)


def _effective_classes(alpha: float, seed: int = 0) -> float:
    """Mean over clients of exp(entropy of its label histogram): 1 for one-class clients."""
    y = _labels()
    h = label_histograms(y, split_clients("label", y, torch.zeros_like(y), 10, alpha, seed), 10)
    ent = -(h * h.clamp_min(1e-12).log()).sum(1)
    return float(ent.exp().mean())


def test_label_skew_partitions_every_example_once() -> None:
    y = _labels()
    parts = split_clients("label", y, torch.zeros_like(y), 10, 0.1, 0)
    assert torch.equal(torch.cat(parts).sort().values, torch.arange(len(y)))
    assert min(len(p) for p in parts) >= 2


def test_label_histograms_follow_alpha() -> None:
    """Small alpha: near one-class clients; alpha -> inf: every client sees all 10 classes."""
    small, mid, large = (
        sum(_effective_classes(a, s) for s in range(3)) / 3 for a in (0.05, 1.0, 1e3)
    )
    assert small < 3.0, small  # IID: 10
    assert small < mid < large
    assert large > 9.5, large
    # the mean total-variation distance from the global label distribution shrinks likewise
    y = _labels()
    tv = []
    for a in (0.1, 1e3):
        h = label_histograms(y, split_clients("label", y, torch.zeros_like(y), 10, a, 1), 10)
        tv.append(float((h - 0.1).abs().sum(1).mean() / 2))
    assert tv[0] > 0.5 > 0.1 > tv[1], tv


def test_splits_are_deterministic_in_the_seed() -> None:
    y = _labels()
    a = split_clients("label", y, torch.zeros_like(y), 5, 0.3, 7)
    b = split_clients("label", y, torch.zeros_like(y), 5, 0.3, 7)
    c = split_clients("label", y, torch.zeros_like(y), 5, 0.3, 8)
    assert all(torch.equal(p, q) for p, q in zip(a, b, strict=True))
    assert not all(torch.equal(p, q) for p, q in zip(a, c, strict=True))


def test_quantity_skew_sizes_vary_labels_do_not() -> None:
    y = _labels()
    parts = split_clients("quantity", y, torch.zeros_like(y), 10, 0.3, 0)
    sizes = sorted(len(p) for p in parts)
    assert sum(sizes) == len(y) and sizes[0] >= 2 and sizes[-1] > 4 * sizes[len(sizes) // 2 - 1]
    big = max(parts, key=len)
    assert float(label_histograms(y, [big], 10).max()) < 0.2


def test_feature_skew_gives_each_client_one_environment() -> None:
    y = _labels()
    env = torch.arange(3).repeat(len(y) // 3 + 1)[: len(y)]
    parts = split_clients("feature", y, env, 6, 1.0, 0)
    for i, p in enumerate(parts):
        assert set(env[p].tolist()) == {i % 3}
    assert torch.equal(torch.cat(parts).sort().values, torch.arange(len(y)))
