"""Leakage-free splits: cluster the samples by similarity, then hold out whole clusters.

A random split of data made of families of near-duplicates (proteins of one fold, interfaces of
one complex, augmentations of one image) puts members of a family on both sides, so the test set
rewards memorizing families. PPIformer's PPIRef (Bushuiev et al., ICLR 2024, catalogue #3) splits
by structural-similarity clusters instead. ``cluster_split`` does the same for any feature matrix:
agglomerative clustering (``scipy.cluster.hierarchy``, average linkage) cut at a distance
threshold, then whole clusters drawn at random into the test side until it holds its share.
``random_split`` is the leaky baseline. Both return index arrays, so any task can use them.
"""

from __future__ import annotations

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage


def random_split(n: int, test_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Sample indices ``(train, test)``: a uniform ``test_fraction`` of ``range(n)`` held out."""
    _check(n, test_fraction)
    order = np.random.default_rng(seed).permutation(n)
    k = max(1, round(test_fraction * n))
    return np.sort(order[k:]), np.sort(order[:k])


def clusters(x: np.ndarray, threshold: float) -> np.ndarray:
    """Cluster labels of the rows of ``x``: average-linkage agglomerative clustering on Euclidean
    distance, cut where clusters are more than ``threshold`` apart."""
    if threshold <= 0:
        raise ValueError(f"threshold must be > 0, got {threshold}")
    if len(x) < 2:
        return np.zeros(len(x), dtype=int)
    return fcluster(linkage(np.asarray(x, dtype=float), "average"), threshold, "distance")


def cluster_split(
    x: np.ndarray, test_fraction: float, threshold: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Sample indices ``(train, test)`` with no cluster (``clusters(x, threshold)``) on both sides:
    clusters in random order join the test side until it holds ``test_fraction`` of the samples."""
    _check(len(x), test_fraction)
    labels = clusters(x, threshold)
    ids = np.random.default_rng(seed).permutation(np.unique(labels))
    want, test = test_fraction * len(x), []
    for c in ids:
        if sum(len(t) for t in test) >= want:
            break
        test.append(np.flatnonzero(labels == c))
    held = np.sort(np.concatenate(test))
    if len(held) == len(x):
        raise ValueError(f"threshold {threshold} leaves one cluster: nothing to train on")
    return np.setdiff1d(np.arange(len(x)), held), held


def _check(n: int, test_fraction: float) -> None:
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    if n < 2:
        raise ValueError(f"need at least 2 samples to split, got {n}")
