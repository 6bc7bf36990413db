"""Leakage-free splits (``genlab.splits``) and the ``family_clusters`` task that uses them (#3)."""

from __future__ import annotations

import numpy as np
import pytest

from genlab.splits import cluster_split, clusters, random_split
from genlab.tasks import TASKS


def _families(k: int = 12, per: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    fam = np.repeat(np.arange(k), per)
    return rng.normal(0, 10, (k, 4))[fam] + rng.normal(0, 0.1, (k * per, 4)), fam


def test_clusters_recover_separated_families():
    x, fam = _families()
    labels = clusters(x, threshold=2.0)
    assert len(np.unique(labels)) == 12
    for f in range(12):  # each family is exactly one cluster
        assert len(np.unique(labels[fam == f])) == 1


def test_cluster_split_keeps_every_family_on_one_side():
    x, fam = _families()
    train, test = cluster_split(x, 0.25, threshold=2.0, seed=3)
    assert set(fam[train]).isdisjoint(fam[test])
    assert sorted(np.concatenate([train, test])) == list(range(len(x)))
    assert 0.25 * len(x) <= len(test) < 0.25 * len(x) + 5  # whole families, just past the share


def test_random_split_leaks_families():
    x, fam = _families()
    train, test = random_split(len(x), 0.25, seed=3)
    assert len(test) == 15 and not set(fam[train]).isdisjoint(fam[test])


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: random_split(10, 1.0, 0), "test_fraction"),
        (lambda: clusters(np.zeros((3, 2)), 0.0), "threshold"),
        (lambda: cluster_split(np.zeros((4, 2)), 0.5, 1.0, 0), "one cluster"),
    ],
)
def test_split_errors_name_the_field(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_family_clusters_task_splits():
    build = TASKS.get("family_clusters")
    params = build.params(families=20, per_family=5, fresh_families=3, split="cluster")
    data = build.obj(params, 0)
    assert set(data.test) == {"heldout", "fresh"} and len(data.test["fresh"].y) == 15
    total = len(data.train["train"].y) + len(data.val["train"].y) + len(data.test["heldout"].y)
    assert total == 100 and data.info.n_outputs == 2
