"""OAT: OOD-data augmented training (Lee et al., "Removing Undesirable Feature Contributions Using
Out-of-Distribution Data", ICLR 2021, #6).

Beside the labelled batch, the model sees a batch of out-of-distribution inputs with the uniform
distribution over classes as its soft target, so features shared with OOD data stop contributing
to the logits: ``CE(f(x), y) + oat_lambda * CE(f(x_ood), uniform)``. The OOD pool here is
procedural (no download): per image, uniform noise, a random straight stroke, or a random
rectangle, in the task's input shape, drawn from a generator seeded by the step counter (a model
buffer), so runs are reproducible and resumable. ``ood_pool="constant"`` draws flat images of one
random grey level instead: a pool that shares no spatial feature with the data (a control).

``adv_eps > 0`` trains adversarially as the paper's OAT+PGD: L-inf PGD (``adv_steps`` steps from
a random start) perturbs the labelled *and* the OOD images to raise this same loss, and the
model trains on the perturbed batch (Lee et al.'s ``AT/train.py``; ``oat_lambda=0`` is plain PGD
adversarial training, Madry et al.). Differences from the official code: the OOD pool is
procedural, not 80M-TinyImages; the OOD batch is ``ood_batch`` images beside the labelled batch
(the paper: half of one batch, OOD examples weighted ``alpha = 5``; ``CE + 5 CE_ood`` here is that
loss up to a factor of 2 in the learning rate).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import torch
import torch.nn.functional as F
from pydantic import Field
from torch import Tensor, nn

from genlab.attacks import linf_pgd
from genlab.data import TaskInfo
from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.methods.dg_shared import Ranges, buffer, pooled
from genlab.registry import Params


class OATParams(Params):
    """Params of ``oat``."""

    oat_lambda: float = Field(1.0, ge=0, description="weight of the uniform-target OOD loss")
    ood_batch: int = Field(64, ge=1, description="OOD images per step")
    ood_pool: Literal["procedural", "constant"] = Field(
        "procedural", description="noise/strokes/rectangles, or flat grey images (a control)"
    )
    adv_eps: float = Field(0.0, ge=0, le=1, description="L-inf PGD radius (0: standard training)")
    adv_steps: int = Field(5, ge=1, le=50, description="PGD steps when adv_eps > 0")


def ood_images(n: int, shape: tuple[int, ...], gen: torch.Generator) -> Tensor:
    """``n`` procedural OOD images in [0, 1]: noise, a stroke, or a rectangle (a third each)."""
    c, h, w = shape
    kind = torch.randint(0, 3, (n,), generator=gen)
    out = torch.rand(n, c, h, w, generator=gen)  # kind 0: uniform noise
    yy, xx = torch.meshgrid(torch.linspace(0, 1, h), torch.linspace(0, 1, w), indexing="ij")
    p = torch.rand(n, 4, generator=gen)
    # kind 1: a stroke through two random points (distance to the line < 0.08)
    dx, dy = p[:, 2] - p[:, 0], p[:, 3] - p[:, 1]
    dist = (
        dy[:, None, None] * (xx - p[:, 0, None, None])
        - dx[:, None, None] * (yy - p[:, 1, None, None])
    ).abs() / (dx.hypot(dy)[:, None, None] + 1e-6)
    stroke = (dist < 0.08).float()
    # kind 2: an axis-aligned rectangle between the same two points
    lo_x, hi_x = p[:, 0].minimum(p[:, 2]), p[:, 0].maximum(p[:, 2])
    lo_y, hi_y = p[:, 1].minimum(p[:, 3]), p[:, 1].maximum(p[:, 3])
    rect = (
        (xx >= lo_x[:, None, None])
        & (xx <= hi_x[:, None, None])
        & (yy >= lo_y[:, None, None])
        & (yy <= hi_y[:, None, None])
    ).float()
    shapes = torch.where((kind == 1)[:, None, None], stroke, rect)[:, None].expand(n, c, h, w)
    return torch.where((kind == 0)[:, None, None, None], out, shapes)


def uniform_ce(logits: Tensor) -> Tensor:
    """Cross-entropy against the uniform distribution: ``-mean_k log softmax(logits)_k``."""
    return -F.log_softmax(logits, dim=-1).mean(dim=-1).mean()


@METHODS.register("oat", OATParams, papers=(6,), family="domain-generalization")
class OAT(Method):
    """Standard training plus uniform soft targets on a procedural OOD pool (Lee et al., #6)."""

    RANGES: ClassVar[Ranges] = {"oat_lambda": ("log10", -1, 1)}

    def __init__(self, params: OATParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        if len(info.input_shape) != 3:
            raise ValueError("method 'oat' needs image inputs (C, H, W) for its OOD pool")

    def wrap(self, model: nn.Module) -> nn.Module:
        buffer(model, "dg_updates", torch.zeros((), dtype=torch.long))
        return model

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x, y, _ = pooled(batches)
        p = self.params
        step = int(getattr(model, "dg_updates", 0))
        gen = torch.Generator().manual_seed(1_000_000 + step)
        n_ood = p.ood_batch if p.oat_lambda > 0 else 0
        if p.ood_pool == "constant":
            level = torch.rand(n_ood, 1, 1, 1, generator=gen)
            x_ood = level.expand(n_ood, *self.info.input_shape).clone()
        else:
            x_ood = ood_images(n_ood, self.info.input_shape, gen)
        inputs = torch.cat([x, x_ood.to(x.dtype)])

        def objective(logits: Tensor) -> tuple[Tensor, Tensor, Tensor]:
            ce = cross_entropy(logits[: len(y)], y)
            ood = uniform_ce(logits[len(y) :]) if n_ood else ce.new_zeros(())
            return ce + p.oat_lambda * ood, ce, ood

        if p.adv_eps > 0:
            inputs = linf_pgd(
                model, inputs, lambda z: objective(z)[0], p.adv_eps, p.adv_steps, gen=gen
            )
        loss, ce, ood = objective(model(inputs))
        return loss, {"ce": ce.item(), "ood_ce": ood.item()}

    def step(
        self, model: nn.Module, optimizer: torch.optim.Optimizer, batches: dict[str, Batch]
    ) -> dict[str, float]:
        logs = super().step(model, optimizer, batches)
        model.dg_updates += 1
        return logs
