"""``comp.random_toys`` (#64): the procedural toy generator, its grasp-axis labels and the claim's
decision on synthetic tables."""

from __future__ import annotations

import math

import numpy as np
import pytest

from genlab.claims import CLAIMS
from genlab.errors import SpecError
from genlab.tasks.random_toys import (
    BINS,
    PRIMITIVES,
    SIZE,
    RandomToysParams,
    axis,
    draw_toy,
    label,
    random_toys,
    render,
)

CLAIM = CLAIMS.get("comp.random_toys").obj
SMALL = {"n_toys": 5, "n_train": 60, "n_val": 20, "n_test": 30}


def test_axis_of_a_bar_and_its_bin():
    bar = np.zeros((SIZE, SIZE), dtype=np.float32)
    bar[7:9, 2:14] = 1  # horizontal
    phi, ratio = axis(bar)
    assert phi[0] == pytest.approx(0.0, abs=1e-6) and ratio[0] > 5
    assert label(phi[0]) == 0 and label(math.pi / 2) == 2 and label(3 * math.pi / 4) == 3
    assert label(math.pi - 0.01) == 0  # the axis is an undirected line
    assert np.isnan(axis(np.zeros((SIZE, SIZE)))[0][0])


def test_render_rotates_the_axis():
    toy = [("cuboid", 0.0, 0.0, 0.0, 0.4, 0.1)]
    for k in range(BINS):
        img = render(toy, k * math.pi / BINS, 0.0, 0.0, 2.0)
        assert img.shape == (1, SIZE, SIZE) and set(np.unique(img)) <= {0.0, 1.0}
        assert label(axis(img)[0][0]) == k


@pytest.mark.parametrize("kind", PRIMITIVES)
def test_every_primitive_draws_something(kind):
    rng = np.random.default_rng(0)
    toy = draw_toy([kind], rng)
    assert 2 <= len(toy) <= 4 and {p[0] for p in toy} == {kind}
    assert render(toy, 0.0, 0.0, 0.0, 2.0).sum() > 3


@pytest.mark.parametrize("test_objects", ["digits", "toys", "train_toys"])
def test_task_shapes_and_determinism(test_objects):
    p = RandomToysParams(**SMALL, test_objects=test_objects)
    a, b = random_toys(p, 3), random_toys(p, 3)
    assert a.train["main"].x.shape == (60, 1, SIZE, SIZE) and len(a.val["main"].y) == 20
    assert a.test["objects"].x.shape == (30, 1, SIZE, SIZE)
    assert a.info.n_outputs == BINS and a.info.chance == 0.25
    for split in ("train", "val", "test"):
        (x1, y1), (x2, y2) = (
            (next(iter(getattr(d, split).values())).x, next(iter(getattr(d, split).values())).y)
            for d in (a, b)
        )
        assert (x1 == x2).all() and (y1 == y2).all()
    assert not (random_toys(p, 4).train["main"].x == a.train["main"].x).all()
    assert set(a.train["main"].y.tolist()) <= set(range(BINS))


def test_test_set_is_shared_by_the_arms_and_labels_match_images():
    few = random_toys(RandomToysParams(**{**SMALL, "n_toys": 2}), 0)
    one = random_toys(RandomToysParams(**SMALL, primitives=["cuboid"]), 0)
    assert (few.test["objects"].x == one.test["objects"].x).all()
    x, y = few.train["main"].x[:, 0].numpy(), few.train["main"].y.numpy()
    assert all(label(p) == t for p, t in zip(axis(x)[0], y, strict=True))


def test_copies_when_not_distinct():
    p = RandomToysParams(**SMALL, distinct=False)
    d = random_toys(p, 0)
    assert d.info.extra["n_toys"] == 5 and len(d.train["main"].y) == 60


def test_bad_task_params_are_named():
    with pytest.raises(ValueError, match="primitives"):
        RandomToysParams(primitives=["cuboid", "cuboid"])
    with pytest.raises(ValueError):
        RandomToysParams(primitives=["pyramid"])


def test_claim_arms():
    cfg = CLAIM.config("smoke")
    arms = CLAIM.arms(cfg)
    assert sorted({a.labels["toys"] for a in arms}) == ["few", "many", "one_type"]
    assert len(arms) == 3 * cfg.seeds
    one = next(a for a in arms if a.labels["toys"] == "one_type")
    assert (
        one.spec.task.params["primitives"] == ["cuboid"] and one.spec.task.params["n_toys"] == 256
    )


@pytest.mark.parametrize(
    ("case", "verdict"),
    [("effect", "reproduced"), ("null", "not reproduced"), ("unfit", "inconclusive")],
)
def test_decision_on_synthetic_tables(case, verdict):
    cfg = CLAIM.config("full")
    assert CLAIM.evaluate(cfg, CLAIM.synthetic_table(cfg, case)).verdict == verdict


@pytest.mark.parametrize("bad", [{"test_objects": "ycb"}, {"seeds": 1}, {"few": 0}])
def test_bad_claim_params_are_named(bad):
    with pytest.raises(SpecError, match="claim"):
        CLAIM.config("full", bad)
