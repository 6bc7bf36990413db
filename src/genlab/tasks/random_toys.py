"""``random_toys``: objects assembled at random from shape primitives, and the grasp axis of each.

After "Grasping by playing with random toys" (2025, catalogue #64), whose robot learns to grasp
from random assemblies of four primitives (spheres, cuboids, cylinders, rings) and is tested
zero-shot on real objects. Here a *toy* is 2-4 primitives drawn in 2D at random places, sizes and
angles (``sphere``: a disk, ``cuboid``: a rectangle, ``cylinder``: a capsule, ``ring``: an
annulus), rendered as a binary 16x16 silhouette in a random pose (rotation, shift, scale 1.6-2.4,
about the size of the digits). The
label is the orientation of the silhouette's principal axis (second moments) in four 45-degree
bins, the angle a parallel-jaw gripper closes across: poses are drawn so that the axis lies within
15 degrees of a bin centre, and the label is read back from the rendered image. Toys whose
silhouette is nearly isotropic (eigenvalue ratio < 1.5) are redrawn.

Splits: ``train/main`` (``n_train`` images, the ``n_toys`` toys in equal shares of poses),
``val/main`` (new poses of the same toys), ``test/objects``: ``test_objects="digits"``, scikit-learn
digits (upsampled to 16x16, rotated, binarised; never seen) as the "real objects", ``"toys"``,
new toys of all four primitives, or ``"train_toys"``, new poses of the training toys (no novel
object). ``distinct=False`` makes every toy a copy of the first one (the
number of toys adds no shapes). Everything depends on ``data_seed`` alone.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
from pydantic import Field, field_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.datasets.digits import load_digits_tensors
from genlab.registry import Params
from genlab.tasks import TASKS

PRIMITIVES = ("sphere", "cuboid", "cylinder", "ring")
SIZE = 16
BINS = 4
MARGIN = math.radians(15)  # poses put the axis within this of a bin centre
MIN_RATIO = 1.5  # eigenvalue ratio below which a silhouette has no clear axis
SCALE = (1.6, 2.4)  # pose scale: toys about as large on the canvas as the digits


class RandomToysParams(Params):
    """Params of ``random_toys``."""

    n_toys: int = Field(64, ge=1, le=100_000, description="distinct toys in the training set")
    primitives: list[Literal["sphere", "cuboid", "cylinder", "ring"]] = Field(
        default_factory=lambda: list(PRIMITIVES),
        min_length=1,
        description="primitive types the training toys are assembled from",
    )
    n_train: int = Field(2000, ge=1, le=50_000)
    n_val: int = Field(400, ge=1, le=10_000)
    n_test: int = Field(600, ge=1, le=1500)
    test_objects: Literal["digits", "toys", "train_toys"] = "digits"
    distinct: bool = Field(True, description="False: every toy is a copy of the first")

    @field_validator("primitives")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError(f"primitives repeat: {v}")
        return v


def _grid() -> tuple[np.ndarray, np.ndarray]:
    c = (np.arange(SIZE) + 0.5) / SIZE * 2 - 1
    return np.meshgrid(c, -c)  # x to the right, y up


def draw_toy(types: list[str], rng: np.random.Generator) -> list[tuple]:
    """One toy: 2-4 primitives ``(type, cx, cy, angle, a, b)`` in its own frame."""
    parts = []
    for _ in range(int(rng.integers(2, 5))):
        t = types[int(rng.integers(len(types)))]
        r, ang = 0.3 * math.sqrt(rng.random()), rng.uniform(0, 2 * math.pi)
        cx, cy, rot = r * math.cos(ang), r * math.sin(ang), rng.uniform(0, math.pi)
        if t == "sphere":
            a, b = rng.uniform(0.12, 0.28), 0.0
        elif t == "cuboid":
            a, b = rng.uniform(0.1, 0.4), rng.uniform(0.07, 0.18)
        elif t == "cylinder":
            a, b = rng.uniform(0.1, 0.35), rng.uniform(0.06, 0.14)
        else:
            a, b = rng.uniform(0.18, 0.32), rng.uniform(0.06, 0.1)
        parts.append((t, cx, cy, rot, a, b))
    return parts


def render(toy: list[tuple], theta, dx, dy, scale) -> np.ndarray:
    """The toy's binary ``SIZE x SIZE`` silhouettes rotated by ``theta``, shifted by ``(dx, dy)``,
    scaled by ``scale`` (scalars or arrays of ``m`` poses -> ``(m, SIZE, SIZE)``)."""
    gx, gy = _grid()
    theta, dx, dy, scale = (
        np.atleast_1d(np.asarray(v, dtype=float))[:, None, None] for v in (theta, dx, dy, scale)
    )
    # pixel -> toy frame: undo the shift, the rotation, the scale
    x, y = (gx - dx) / scale, (gy - dy) / scale
    c, s = np.cos(-theta), np.sin(-theta)
    x, y = c * x - s * y, s * x + c * y
    img = np.zeros(x.shape, dtype=bool)
    for t, cx, cy, rot, a, b in toy:
        cr, sr = math.cos(-rot), math.sin(-rot)
        u, v = cr * (x - cx) - sr * (y - cy), sr * (x - cx) + cr * (y - cy)
        if t == "sphere":
            img |= u**2 + v**2 < a**2
        elif t == "cuboid":
            img |= (np.abs(u) < a) & (np.abs(v) < b)
        elif t == "cylinder":
            img |= np.hypot(np.clip(np.abs(u) - a, 0, None), v) < b
        else:
            rr = np.hypot(u, v)
            img |= (rr < a) & (rr > a - b)
    return img.astype(np.float32)


def axis(img: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per image of ``(m, SIZE, SIZE)`` (or one image): the principal axis angle in [0, pi) and
    the eigenvalue ratio (inf: a line; nan for both: fewer than 3 pixels)."""
    img = np.asarray(img, dtype=float).reshape(-1, SIZE, SIZE)
    gx, gy = _grid()
    w = img.sum(axis=(1, 2))
    ok = w >= 3
    w = np.where(ok, w, 1.0)
    mx, my = (img * gx).sum(axis=(1, 2)) / w, (img * gy).sum(axis=(1, 2)) / w
    dx, dy = gx - mx[:, None, None], gy - my[:, None, None]
    cxx, cyy = (img * dx**2).sum(axis=(1, 2)) / w, (img * dy**2).sum(axis=(1, 2)) / w
    cxy = (img * dx * dy).sum(axis=(1, 2)) / w
    phi = 0.5 * np.arctan2(2 * cxy, cxx - cyy) % np.pi
    half = (cxx + cyy) / 2
    disc = np.sqrt(np.maximum(half**2 - (cxx * cyy - cxy**2), 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(half - disc > 1e-9, (half + disc) / (half - disc), np.inf)
    return np.where(ok, phi, np.nan), np.where(ok, ratio, np.nan)


def label(phi: float) -> int:
    """The 45-degree bin of an axis angle, bins centred on 0, 45, 90 and 135 degrees."""
    return int(((phi + math.pi / (2 * BINS)) % math.pi) // (math.pi / BINS))


def _toys(n: int, types: list[str], rng: np.random.Generator) -> list[list[tuple]]:
    out = []
    while len(out) < n:
        toy = draw_toy(types, rng)
        if axis(render(toy, 0.0, 0.0, 0.0, 2.0))[1][0] >= MIN_RATIO:
            out.append(toy)
    return out


def _poses(toys: list[list[tuple]], n: int, rng: np.random.Generator) -> Split:
    """``n`` images, toy ``i % len(toys)`` each, posed so the axis sits near a bin centre (poses
    whose silhouette loses its axis, e.g. clipped at the border, are drawn again)."""
    base = np.array([axis(render(t, 0.0, 0.0, 0.0, 2.0))[0][0] for t in toys])
    xs, ys, need = [], [], np.arange(n) % len(toys)
    while len(need):
        m = len(need)
        target = rng.integers(BINS, size=m) * math.pi / BINS + rng.uniform(-MARGIN, MARGIN, m)
        shift, scale = rng.uniform(-0.15, 0.15, (m, 2)), rng.uniform(*SCALE, m)
        imgs = np.zeros((m, SIZE, SIZE), dtype=np.float32)
        for k in np.unique(need):
            at = np.flatnonzero(need == k)
            imgs[at] = render(toys[k], target[at] - base[k], shift[at, 0], shift[at, 1], scale[at])
        phi, ratio = axis(imgs)
        good = ratio >= MIN_RATIO
        xs.append(imgs[good])
        ys.append(((phi[good] + math.pi / (2 * BINS)) % math.pi // (math.pi / BINS)).astype(int))
        need = need[~good]
    x, y = np.concatenate(xs), np.concatenate(ys)
    order = rng.permutation(n)
    return Split(
        torch.from_numpy(x[order])[:, None], torch.from_numpy(y[order]).long(), {"objects": "toys"}
    )


def _digits(n: int, rng: np.random.Generator) -> Split:
    """Up to ``n`` digits as objects: upsampled, rotated near a bin centre, binarised."""
    images, _ = load_digits_tensors()
    big = F.interpolate(
        images[torch.from_numpy(rng.permutation(len(images)))].float(),
        size=(SIZE, SIZE),
        mode="bilinear",
        align_corners=False,
    )
    phi0, _ = axis((big[:, 0] > 0.5).float().numpy())
    turn = rng.integers(BINS, size=len(big)) * math.pi / BINS
    turn = turn + rng.uniform(-MARGIN, MARGIN, len(big)) - phi0
    c, s = np.cos(np.nan_to_num(turn)), np.sin(np.nan_to_num(turn))
    # affine_grid maps output to input coordinates with y down: this turns the image by +turn
    theta = torch.tensor(
        np.stack([np.stack([c, -s, 0 * c], 1), np.stack([s, c, 0 * c], 1)], 1), dtype=torch.float32
    )
    grid = F.affine_grid(theta, [len(big), 1, SIZE, SIZE], align_corners=False)
    out = (F.grid_sample(big, grid, align_corners=False) > 0.5).float().numpy()[:, 0]
    phi, ratio = axis(out)
    keep = np.flatnonzero(ratio >= MIN_RATIO)[:n]
    y = [label(p) for p in phi[keep]]
    return Split(torch.from_numpy(out[keep])[:, None], torch.tensor(y), {"objects": "digits"})


@TASKS.register(
    "random_toys",
    RandomToysParams,
    papers=(64,),
    family="compositional",
    tiny={"n_toys": 4, "n_train": 64, "n_val": 32, "n_test": 32},
)
def random_toys(params: RandomToysParams, data_seed: int) -> TaskData:
    """Random assemblies of primitives in random poses; label: the grasp-axis bin (#64)."""
    rng = np.random.default_rng(data_seed)
    toys = _toys(params.n_toys if params.distinct else 1, list(params.primitives), rng)
    toys = toys if params.distinct else toys * params.n_toys
    train, val = _poses(toys, params.n_train, rng), _poses(toys, params.n_val, rng)
    test_rng = np.random.default_rng([data_seed, 64])  # the same test set for every design
    if params.test_objects == "digits":
        test = _digits(params.n_test, test_rng)
    elif params.test_objects == "train_toys":
        test = _poses(toys, params.n_test, rng)
    else:
        test = _poses(_toys(params.n_test, list(PRIMITIVES), test_rng), params.n_test, test_rng)
    info = TaskInfo(
        kind="classification",
        n_outputs=BINS,
        input_shape=(1, SIZE, SIZE),
        chance=1 / BINS,
        extra={"n_toys": params.n_toys},
    )
    return TaskData(train={"main": train}, val={"main": val}, test={"objects": test}, info=info)
