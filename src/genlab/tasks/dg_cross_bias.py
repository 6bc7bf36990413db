"""``cross_bias_digits``: digits on a background color that predicts the label in training only.

The biased Colored MNIST of ReBias (Bahng et al., #90) on scikit-learn's 8x8 digits: each of the ten
classes has its own background color; in the training split an image gets its class's color with
probability ``rho`` (else another class's color, drawn uniformly), so color is a shortcut; the test
split ``unbiased`` draws the color uniformly, independent of the label. ``val`` is held out from
the biased distribution (training-domain validation).
"""

from __future__ import annotations

import torch
from pydantic import Field

from genlab.data import Split, TaskData, TaskInfo
from genlab.datasets.digits import load_digits_tensors
from genlab.registry import Params
from genlab.tasks import TASKS

# ten well-separated RGB background colors, one per class
PALETTE = torch.tensor(
    [
        [0.9, 0.1, 0.1],
        [0.1, 0.8, 0.1],
        [0.1, 0.2, 0.9],
        [0.9, 0.8, 0.1],
        [0.8, 0.1, 0.8],
        [0.1, 0.8, 0.8],
        [0.9, 0.5, 0.1],
        [0.5, 0.1, 0.9],
        [0.5, 0.9, 0.5],
        [0.4, 0.4, 0.4],
    ]
)


class CrossBiasParams(Params):
    """Params of ``cross_bias_digits``."""

    rho: float = Field(0.99, ge=0, le=1, description="P(background color = the label's color)")
    test_fraction: float = Field(0.3, gt=0, lt=1, description="share held out as unbiased test")
    val_fraction: float = Field(0.15, gt=0, lt=1, description="share held out as biased val")


def colorize(images: torch.Tensor, colors: torch.Tensor) -> torch.Tensor:
    """White digit strokes over a colored background: ``x = d + (1 - d) * color`` per channel."""
    d = images.expand(len(images), 3, *images.shape[2:])
    return d + (1 - d) * PALETTE[colors][:, :, None, None]


def _colors(y: torch.Tensor, rho: float, gen: torch.Generator) -> torch.Tensor:
    other = (y + torch.randint(1, 10, y.shape, generator=gen)) % 10
    return torch.where(torch.rand(len(y), generator=gen) < rho, y, other)


@TASKS.register("cross_bias_digits", CrossBiasParams, papers=(90,), family="domain-shift")
def cross_bias_digits(params: CrossBiasParams, data_seed: int) -> TaskData:
    """Digits whose background color agrees with the label w.p. ``rho`` in training, never at test.

    Params: ``rho`` (0.99), ``test_fraction`` (0.3), ``val_fraction`` (0.15). Splits:
    ``train/biased``, ``val/biased``, ``test/unbiased``.
    """
    images, y = load_digits_tensors()
    gen = torch.Generator().manual_seed(data_seed)
    order = torch.randperm(len(y), generator=gen)
    n_test = int(round(params.test_fraction * len(y)))
    n_val = int(round(params.val_fraction * len(y)))
    te, va, tr = order[:n_test], order[n_test : n_test + n_val], order[n_test + n_val :]
    if len(tr) < 10:
        raise ValueError("test_fraction + val_fraction leave fewer than 10 training images")
    biased = {"bias": "color", "rho": params.rho}
    uniform = torch.randint(0, 10, (len(te),), generator=gen)

    def split(idx: torch.Tensor, colors: torch.Tensor, meta: dict) -> Split:
        return Split(colorize(images[idx], colors), y[idx], meta)

    return TaskData(
        train={"biased": split(tr, _colors(y[tr], params.rho, gen), biased)},
        val={"biased": split(va, _colors(y[va], params.rho, gen), biased)},
        test={"unbiased": split(te, uniform, {"bias": "none"})},
        info=TaskInfo(
            kind="classification",
            n_outputs=10,
            input_shape=(3, 8, 8),
            chance=0.1,
            extra={"train_envs": ["biased"], "test_envs": ["unbiased"]},
        ),
    )
