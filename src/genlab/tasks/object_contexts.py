"""``object_contexts``: digits (objects) on coloured backgrounds (contexts), with held-out
object-context combinations.

A generated stand-in for NICO++ (Zhang et al., CVPR 2023, #15: objects photographed in labelled
contexts, some combinations never seen in training) and for the fragmented multi-source data of
the shortcut-learning study of generalist robot policies (#39: sub-datasets that each cover a
narrow range of a task-irrelevant nuisance and their own subset of tasks).

Each of scikit-learn's 8x8 digits is drawn white on a background whose hue ``t`` is the nuisance
(RGB ``0.5 + 0.4 sin(t + 2 pi j / 3)``, j = 0, 1, 2). Context ``k`` has the hue centre
``k * disparity`` (radians); an image's hue is drawn uniformly within ``diversity`` of it. Class
``c`` is *seen* in the ``seen`` contexts ``c, c+1, ..., c+seen-1`` (mod ``contexts``) and
training images of class ``c`` are dealt among those; every other context is an unseen
combination. Splits: ``train/<ctx>`` and ``val/<ctx>`` (seen combinations, a training environment
per context), ``test/unseen`` (every image in a context its class was not seen in; when
``seen == contexts`` every combination is seen and ``test/unseen`` holds fresh images in
uniformly drawn contexts). Knobs:

* ``disparity``: the distance between contexts (covariate shift between seen and unseen
  combinations; 0: every context looks alike);
* ``diversity``: the width of each context's hue range (within-context diversity);
* ``concept_shift``: the share of ``test/unseen`` labels replaced by another class (P(y|x)
  differs between training and test: concept shift);
* ``train_concept_shift``: the share of training and validation labels (the source domains)
  replaced by another class, drawn uniformly: the sources' P(y|x) is the test's mixed with the
  other classes, so source and target differ in concept while the most likely label of every
  image stays its own (drawn from a generator of its own, so the images, contexts and test set
  of a data seed do not change with it);
* ``augment``: the share of training images whose hue is redrawn uniformly over the span of all
  contexts (nuisance augmentation).

The realisation depends on ``data_seed`` alone.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import torch
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.datasets.digits import load_digits_tensors
from genlab.registry import Params
from genlab.tasks import TASKS

N_CLASSES = 10


class ObjectContextsParams(Params):
    """Params of ``object_contexts``."""

    contexts: int = Field(6, ge=2, le=10, description="number of contexts (training environments)")
    seen: int = Field(2, ge=1, description="contexts each class is seen in during training")
    disparity: float = Field(1.0, ge=0, le=math.pi, description="hue distance between contexts")
    diversity: float = Field(0.3, ge=0, le=2 * math.pi, description="hue range within a context")
    concept_shift: float = Field(0.0, ge=0, le=1, description="share of relabelled test images")
    train_concept_shift: float = Field(
        0.0,
        ge=0,
        lt=0.9,
        description="share of relabelled training and validation images (source concept shift)",
    )
    augment: float = Field(0.0, ge=0, le=1, description="share of training hues redrawn at random")
    val_fraction: float = Field(0.2, gt=0, lt=1, description="share of seen images for val/*")
    test_fraction: float = Field(0.3, gt=0, lt=1, description="share of all images for test")

    # added with issue #31: at 0 it is left out of the params, so earlier run ids stay
    quiet_defaults: ClassVar[dict[str, Any]] = {"train_concept_shift": 0.0}

    @model_validator(mode="after")
    def _seen(self) -> ObjectContextsParams:
        if self.seen > self.contexts:
            raise ValueError(f"seen must be <= contexts ({self.contexts}), got {self.seen}")
        return self


def background(hue: torch.Tensor) -> torch.Tensor:
    """``(N,)`` hues to ``(N, 3)`` RGB colours on a circle around mid-grey."""
    phase = torch.arange(3) * (2 * math.pi / 3)
    return 0.5 + 0.4 * torch.sin(hue[:, None] + phase)


def render(ink: torch.Tensor, hue: torch.Tensor) -> torch.Tensor:
    """``(N, 1, 8, 8)`` ink in [0, 1] drawn white over the background of each hue."""
    bg = background(hue)[:, :, None, None]
    return ink + (1 - ink) * bg


@TASKS.register("object_contexts", ObjectContextsParams, papers=(15, 39), family="domain-shift")
def object_contexts(params: ObjectContextsParams, data_seed: int) -> TaskData:
    """Digits on context backgrounds with held-out object-context combinations (#15, #39)."""
    images, y = load_digits_tensors()
    gen = torch.Generator().manual_seed(data_seed)
    k, n = params.contexts, len(y)
    order = torch.randperm(n, generator=gen)
    n_test = int(round(params.test_fraction * n))
    test, rest = order[:n_test], order[n_test:]

    def hues(ctx: torch.Tensor) -> torch.Tensor:
        jitter = (torch.rand(len(ctx), generator=gen) - 0.5) * params.diversity
        return ctx.float() * params.disparity + jitter

    # training and validation: each image in one of its class's seen contexts
    ctx = (y[rest] + torch.randint(0, params.seen, (len(rest),), generator=gen)) % k
    hue = hues(ctx)
    redraw = torch.rand(len(rest), generator=gen) < params.augment
    span = (k - 1) * params.disparity + params.diversity
    uniform = torch.rand(len(rest), generator=gen) * span - params.diversity / 2
    hue = torch.where(redraw, uniform, hue)
    x = render(images[rest], hue)
    is_val = torch.rand(len(rest), generator=gen) < params.val_fraction
    ys = y[rest]
    if params.train_concept_shift > 0:  # its own generator: the main stream stays as it was
        g2 = torch.Generator().manual_seed(data_seed + 104729)
        noisy = torch.rand(len(rest), generator=g2) < params.train_concept_shift
        moved = (ys + torch.randint(1, N_CLASSES, (len(rest),), generator=g2)) % N_CLASSES
        ys = torch.where(noisy, moved, ys)
    train, val = {}, {}
    for c in range(k):
        meta = {"context": c, "hue_centre": c * params.disparity}
        tr, va = (ctx == c) & ~is_val, (ctx == c) & is_val
        train[f"ctx{c}"] = Split(x[tr], ys[tr], meta)
        val[f"ctx{c}"] = Split(x[va], ys[va], meta)

    # test: each image in a context its class was not seen in (any context if all are seen)
    unseen = k - params.seen
    yt = y[test]
    if unseen:
        ctx_t = (yt + params.seen + torch.randint(0, unseen, (len(test),), generator=gen)) % k
    else:
        ctx_t = torch.randint(0, k, (len(test),), generator=gen)
    xt = render(images[test], hues(ctx_t))
    flip = torch.rand(len(test), generator=gen) < params.concept_shift
    other = (yt + torch.randint(1, N_CLASSES, (len(test),), generator=gen)) % N_CLASSES
    yt = torch.where(flip, other, yt)
    envs = [f"ctx{c}" for c in range(k)]
    info = TaskInfo(
        kind="classification",
        n_outputs=N_CLASSES,
        input_shape=(3, 8, 8),
        chance=1 / N_CLASSES,
        extra={"envs": envs, "train_envs": envs, "test_envs": ["unseen"]},
    )
    return TaskData(
        train=train, val=val, test={"unseen": Split(xt, yt, {"relabelled": flip})}, info=info
    )
