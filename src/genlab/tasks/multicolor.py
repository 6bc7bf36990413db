"""Tasks with many spurious features tied to the classes (Lin et al., ICLR 2024, catalogue #16).

Lin et al., "Spurious Feature Diversification Improves Out-of-distribution Generalization", study
WiSE-FT in a multi-class model with one invariant feature and many spurious ones, and test it on
MultiColorMNIST. Two tasks realise that setting here:

- ``multicolor_digits``: scikit-learn's 8x8 digits, white on black, padded to 12x12 with ``n_patches``
  2x2 colour patches in the border. Patch ``k`` of an image of class ``y`` takes colour
  ``palette_k[y]`` with probability ``p_train`` (else a uniformly drawn palette colour); each patch
  has its own random class-to-colour map. ``test/ood`` draws every patch colour at random (the
  spurious features carry nothing); ``test/id`` keeps ``p_train``. ``correlated`` limits which
  patches follow the label (the others are random everywhere), so that two runs can rely on
  different spurious features; ``p_train = 0`` gives the colour-free "pre-training" data.
- ``gaussian_spurious``: the paper's theoretical model. Each of ``n_invariant`` invariant and
  ``n_spurious`` spurious features is a ``dim``-dimensional Gaussian around a class mean; a spurious
  feature follows the label with probability ``p_train`` (else a random class) in training and
  ``test/id``, never in ``test/ood``.

Both draw everything from ``data_seed``, each split and the palettes / class means from their own
generator, so that tasks differing only in training size, ``p_train`` or ``correlated`` (same
``data_seed``) share the palettes, the class means and the whole ``test/ood`` split: a pre-trained
and a fine-tuned run are scored on the same OOD examples.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from pydantic import Field, model_validator
from torch import Tensor

from genlab.data import Split, TaskData, TaskInfo
from genlab.datasets.digits import load_digits_tensors
from genlab.registry import Params
from genlab.tasks import TASKS

N_CLASSES = 10
PALETTE = torch.tensor(
    [
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [1.0, 1.0, 0.0],
        [1.0, 0.0, 1.0],
        [0.0, 1.0, 1.0],
        [1.0, 0.5, 0.0],
        [0.5, 0.0, 1.0],
        [0.0, 0.5, 0.5],
        [0.5, 0.5, 0.5],
    ]
)
# the 20 2x2 cells of the 2-pixel border of a 12x12 image, in reading order
BORDER = [(r, c) for r in range(0, 12, 2) for c in range(0, 12, 2) if r in (0, 10) or c in (0, 10)]


def split_generator(data_seed: int, stream: int) -> torch.Generator:
    """A generator per split, so that a split does not depend on the sizes of the others."""
    return torch.Generator().manual_seed(data_seed * 1_000_003 + stream)


def check_correlated(correlated: list[int] | None, n: int, what: str) -> None:
    if correlated is not None and any(not 0 <= k < n for k in correlated):
        raise ValueError(f"correlated indices must lie in 0..{n - 1} ({what})")


def spurious_labels(
    y: Tensor, k: int, p: float, correlated: list[int] | None, n_classes: int, gen: torch.Generator
) -> Tensor:
    """``(N, k)`` class indices of the spurious features: ``y`` with probability ``p`` for the
    correlated features, a uniform class otherwise."""
    n = len(y)
    rand = torch.randint(0, n_classes, (n, k), generator=gen)
    follow = torch.rand(n, k, generator=gen) < p
    if correlated is not None:
        mask = torch.zeros(k, dtype=torch.bool)
        mask[list(correlated)] = True
        follow &= mask
    return torch.where(follow, y[:, None].expand(n, k), rand)


class MultiColorParams(Params):
    """Params of ``multicolor_digits``."""

    n_patches: int = Field(8, ge=1, le=len(BORDER), description="spurious colour patches (K)")
    p_train: float = Field(0.9, ge=0, le=1, description="P(patch colour follows the class)")
    correlated: list[int] | None = Field(
        None, description="patches that follow the class; default all"
    )
    train_size: int = Field(1000, ge=10, le=1000)
    val_size: int = Field(200, ge=10, le=200)
    test_repeats: int = Field(3, ge=1, le=20, description="patch draws per test image")

    @model_validator(mode="after")
    def _check(self) -> MultiColorParams:
        check_correlated(self.correlated, self.n_patches, "multicolor_digits.n_patches")
        return self


def paint(images: Tensor, classes: Tensor, palettes: Tensor) -> Tensor:
    """``(N, 3, 12, 12)``: the digit in white, patch ``k`` coloured ``palettes[k, classes[:, k]]``."""
    n = len(images)
    x = F.pad(images, (2, 2, 2, 2)).expand(n, 3, 12, 12).clone()
    for k in range(classes.shape[1]):
        r, c = BORDER[k]
        colour = palettes[k][classes[:, k]]  # (N, 3)
        x[:, :, r : r + 2, c : c + 2] = colour[:, :, None, None]
    return x


@TASKS.register(
    "multicolor_digits",
    MultiColorParams,
    papers=(16,),
    family="ensembles",
    tiny={"train_size": 100, "val_size": 20, "test_repeats": 1},
)
def multicolor_digits(params: MultiColorParams, data_seed: int) -> TaskData:
    """Digits with K class-tied colour patches; ``test/ood`` randomises the patches (#16)."""
    p = params
    images, digits = load_digits_tensors()
    order = torch.randperm(len(images), generator=torch.Generator().manual_seed(data_seed))
    # the same 597 test images whatever train_size / val_size, each with test_repeats patchings
    parts = {
        "train": order[: p.train_size],
        "val": order[1000 : 1000 + p.val_size],
        "test": order[1200:].repeat(p.test_repeats),
    }
    pal_gen = torch.Generator().manual_seed(data_seed + 7919)
    palettes = torch.stack(
        [PALETTE[torch.randperm(N_CLASSES, generator=pal_gen)] for _ in range(p.n_patches)]
    )

    def split(idx: Tensor, prob: float, name: str, stream: int) -> Split:
        gen = split_generator(data_seed, stream)
        cls = spurious_labels(digits[idx], p.n_patches, prob, p.correlated, N_CLASSES, gen)
        return Split(paint(images[idx], cls, palettes), digits[idx], {"shift": name})

    return TaskData(
        train={"main": split(parts["train"], p.p_train, "id", 1)},
        val={"main": split(parts["val"], p.p_train, "id", 2)},
        test={
            "id": split(parts["test"], p.p_train, "id", 3),
            "ood": split(parts["test"], 0.0, "ood", 4),
        },
        info=TaskInfo(
            kind="classification",
            n_outputs=N_CLASSES,
            input_shape=(3, 12, 12),
            chance=1 / N_CLASSES,
            extra={"n_patches": p.n_patches},
        ),
    )


class GaussianSpuriousParams(Params):
    """Params of ``gaussian_spurious``."""

    n_classes: int = Field(5, ge=2, le=100)
    dim: int = Field(16, ge=1, le=512, description="dimension of each feature")
    n_invariant: int = Field(1, ge=0, le=64)
    n_spurious: int = Field(10, ge=0, le=256)
    p_train: float = Field(0.9, ge=0, le=1, description="P(spurious feature follows the class)")
    correlated: list[int] | None = Field(
        None, description="spurious features that follow the class; default all"
    )
    inv_strength: float = Field(1.0, gt=0, description="norm of an invariant class mean")
    sp_strength: float = Field(1.0, gt=0, description="norm of a spurious class mean")
    noise: float = Field(1.0, gt=0, description="std of every coordinate's noise")
    n_train: int = Field(2000, ge=10, le=200_000)
    n_test: int = Field(2000, ge=10, le=200_000)

    @model_validator(mode="after")
    def _check(self) -> GaussianSpuriousParams:
        if self.n_invariant + self.n_spurious == 0:
            raise ValueError("need at least one feature (n_invariant + n_spurious >= 1)")
        check_correlated(self.correlated, self.n_spurious, "gaussian_spurious.n_spurious")
        return self


@TASKS.register(
    "gaussian_spurious",
    GaussianSpuriousParams,
    papers=(16,),
    family="ensembles",
    tiny={"dim": 4, "n_spurious": 3, "n_train": 200, "n_test": 200},
)
def gaussian_spurious(params: GaussianSpuriousParams, data_seed: int) -> TaskData:
    """One invariant and many spurious Gaussian features (Lin et al.'s model, #16)."""
    p = params
    mean_gen = torch.Generator().manual_seed(data_seed + 7919)

    def means(n: int, strength: float) -> Tensor:  # (n_features, n_classes, dim)
        m = torch.randn(n, p.n_classes, p.dim, generator=mean_gen)
        return strength * m / m.norm(dim=-1, keepdim=True)

    mu_inv, mu_sp = means(p.n_invariant, p.inv_strength), means(p.n_spurious, p.sp_strength)

    def sample(n: int, prob: float, name: str, stream: int) -> Split:
        gen = split_generator(data_seed, stream)
        y = torch.randint(0, p.n_classes, (n,), generator=gen)
        cls = spurious_labels(y, p.n_spurious, prob, p.correlated, p.n_classes, gen)
        inv = mu_inv[:, y].transpose(0, 1)  # (n, n_invariant, dim)
        sp = mu_sp[torch.arange(p.n_spurious)[None, :], cls]  # (n, n_spurious, dim)
        x = torch.cat([inv, sp], dim=1)
        x = x + p.noise * torch.randn(x.shape, generator=gen)
        return Split(x.reshape(n, -1), y, {"shift": name})

    val_n = max(p.n_test // 4, 10)
    return TaskData(
        train={"main": sample(p.n_train, p.p_train, "id", 1)},
        val={"main": sample(val_n, p.p_train, "id", 2)},
        test={"id": sample(p.n_test, p.p_train, "id", 3), "ood": sample(p.n_test, 0.0, "ood", 4)},
        info=TaskInfo(
            kind="classification",
            n_outputs=p.n_classes,
            input_shape=((p.n_invariant + p.n_spurious) * p.dim,),
            chance=1 / p.n_classes,
            extra={"invariant_dims": p.n_invariant * p.dim, "dim": p.dim},
        ),
    )
