"""SimCLR (Chen, Kornblith, Norouzi & Hinton, ICML 2020): self-supervised contrastive learning, the
substrate of the feature-diversity study (catalogue #81).

Each batch of images is augmented twice (a random translation of up to ``shift`` pixels, zero
padded, then Gaussian pixel noise of std ``noise``: the catalogue's crop/noise augmentations for
8x8 digits); both views go through the model's ``featurize`` (its pooled penultimate features) and
a projection head ``Linear -> ReLU -> Linear`` (``proj_dim``) that ``wrap`` attaches to the model
as ``simclr_head``; the loss is NT-Xent, the cross-entropy of each view's cosine similarities
(temperature ``temperature``) that picks its partner among the other ``2N - 1`` views. Labels are
never read. The model's own classifier is left untrained: read the features with the
``layer_probes`` probe (a linear probe per layer). Randomness comes from torch's global RNG,
seeded by the run's ``seed``.
"""

from __future__ import annotations

from typing import Any

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.registry import Params


class SimCLRParams(Params):
    """Params of ``simclr``."""

    temperature: float = Field(0.5, gt=0, description="NT-Xent temperature")
    shift: int = Field(1, ge=0, le=4, description="largest random translation, in pixels")
    noise: float = Field(0.1, ge=0, description="std of the Gaussian pixel noise")
    proj_dim: int = Field(32, ge=1, description="width of the projection head")


def augment(x: Tensor, shift: int, noise: float) -> Tensor:
    """Each image of ``x`` ``(N, C, H, W)`` translated by its own random offset in
    ``[-shift, shift]²`` (zero padded), plus Gaussian noise."""
    n, _, h, w = x.shape
    if shift:
        pad = nn.functional.pad(x, (shift, shift, shift, shift))
        dy = torch.randint(0, 2 * shift + 1, (n,))
        dx = torch.randint(0, 2 * shift + 1, (n,))
        rows = (dy[:, None] + torch.arange(h)[None])[:, None, :, None]
        cols = (dx[:, None] + torch.arange(w)[None])[:, None, None, :]
        x = pad[
            torch.arange(n)[:, None, None, None],
            torch.arange(x.shape[1])[None, :, None, None],
            rows,
            cols,
        ]
    return x + noise * torch.randn_like(x) if noise else x


def nt_xent(z1: Tensor, z2: Tensor, temperature: float) -> Tensor:
    """SimCLR's normalised-temperature cross-entropy over the ``2N`` views."""
    z = nn.functional.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.T / temperature
    n = len(z1)
    sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool), float("-inf"))
    partner = torch.cat([torch.arange(n, 2 * n), torch.arange(n)])
    return nn.functional.cross_entropy(sim, partner)


@METHODS.register("simclr", SimCLRParams, papers=(81,), family="diag")
class SimCLR(Method):
    """SimCLR contrastive self-supervision on image tasks (Chen et al. 2020; #81's substrate).
    Params: ``temperature``, ``shift``, ``noise``, ``proj_dim``. Needs a model with
    ``featurize`` (``cnn``, ``mnist_cnn``) and images ``(C, H, W)``."""

    def __init__(self, params: SimCLRParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        if len(info.input_shape) != 3:
            raise ValueError(
                f"method simclr needs image inputs (C, H, W), got input shape {info.input_shape}"
            )

    def wrap(self, model: nn.Module) -> nn.Module:
        if not hasattr(model, "featurize"):
            raise ValueError(
                f"method simclr needs a model with featurize (cnn, mnist_cnn), got "
                f"{type(model).__name__}"
            )
        was_training = model.training
        model.eval()
        with torch.no_grad():
            dim = model.featurize(torch.zeros(2, *self.info.input_shape)).shape[1]
        model.train(was_training)
        p = self.params.proj_dim
        model.add_module(
            "simclr_head", nn.Sequential(nn.Linear(dim, p), nn.ReLU(), nn.Linear(p, p))
        )
        return model

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x = torch.cat([b[0] for b in batches.values()])
        p = self.params
        views = augment(torch.cat([x, x]), p.shift, p.noise)
        z = model.simclr_head(model.featurize(views))
        return nt_xent(z[: len(x)], z[len(x) :], p.temperature), {}
