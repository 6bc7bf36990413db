"""scikit-learn's 8x8 digits as a plain classification task, with label noise or random labels.

The diagnostics of cluster C6 are studied on it: gradient coherence on real vs random labels
(Chatterjee & Zielinski, #51), gradient-weight alignment under label noise (Hoelzl et al., #11) and
the probe zoo. The data realisation (split, noisy labels) depends on ``data_seed`` alone.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.datasets.digits import load_digits_tensors
from genlab.registry import Params
from genlab.tasks import TASKS

N_DIGITS = 1797
N_CLASSES = 10


class DigitsParams(Params):
    """Params of ``digits``."""

    train_size: int = Field(1000, ge=10, le=1700, description="training examples (rest: held out)")
    val_size: int = Field(0, ge=0, le=800, description="clean in-distribution validation examples")
    label_noise: float = Field(
        0.0, ge=0, le=1, description="share of training labels replaced by a different class"
    )
    random_labels: bool = Field(False, description="every training label drawn uniformly at random")
    noise_mask: Literal["changed", "placebo"] = Field(
        "changed",
        description="what meta['noisy'] marks: the changed labels, or ('placebo', a "
        "negative control for attribution probes) as many samples whose labels were kept",
    )

    @model_validator(mode="after")
    def _fits(self) -> DigitsParams:
        if self.train_size + self.val_size > N_DIGITS - 10:
            raise ValueError(
                f"train_size + val_size must leave >= 10 test examples of {N_DIGITS}, "
                f"got {self.train_size} + {self.val_size}"
            )
        if self.random_labels and self.label_noise > 0:
            raise ValueError("set either random_labels or label_noise, not both")
        return self


def corrupt_labels(
    y: torch.Tensor, noise: float, random: bool, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric noise: a share ``noise`` of labels moved to a uniformly drawn *other* class;
    ``random``: every label drawn uniformly. Returns the labels and the mask of changed ones."""
    y = y.clone()
    if random:
        new = torch.randint(0, N_CLASSES, y.shape, generator=gen)
        changed = new != y
        return new, changed
    n_noisy = round(noise * len(y))
    idx = torch.randperm(len(y), generator=gen)[:n_noisy]
    shift = torch.randint(1, N_CLASSES, (n_noisy,), generator=gen)
    y[idx] = (y[idx] + shift) % N_CLASSES
    changed = torch.zeros(len(y), dtype=torch.bool)
    changed[idx] = True
    return y, changed


@TASKS.register("digits", DigitsParams, papers=(11, 51), family="diag")
def digits(params: DigitsParams, data_seed: int) -> TaskData:
    """scikit-learn digits (1,797 8x8 images, 10 classes): noisy train, clean val and test splits.

    ``train/main`` holds ``train_size`` images whose labels are corrupted per ``label_noise`` or
    ``random_labels``; its ``meta["noisy"]`` is the boolean mask of changed labels (used by the
    attribution probes; ``noise_mask="placebo"``: as many unchanged ones, a negative control).
    ``val/main`` (``val_size``) and ``test/heldout`` (the rest) keep their true labels.
    """
    x, y = load_digits_tensors()
    gen = torch.Generator().manual_seed(data_seed)
    order = torch.randperm(len(x), generator=gen)
    n_tr, n_va = params.train_size, params.val_size
    tr, va, te = order[:n_tr], order[n_tr : n_tr + n_va], order[n_tr + n_va :]
    y_tr, noisy = corrupt_labels(y[tr], params.label_noise, params.random_labels, gen)
    if params.noise_mask == "placebo":  # as many samples, drawn among the unchanged ones
        kept = (~noisy).nonzero().squeeze(1)
        pick = kept[torch.randperm(len(kept), generator=gen)[: int(noisy.sum())]]
        noisy = torch.zeros_like(noisy).index_fill_(0, pick, True)
    meta = {"noisy": noisy, "label_noise": params.label_noise, "random": params.random_labels}
    val = {"main": Split(x[va], y[va])} if n_va else {}
    return TaskData(
        train={"main": Split(x[tr], y_tr, meta)},
        val=val,
        test={"heldout": Split(x[te], y[te])},
        info=TaskInfo(
            kind="classification", n_outputs=N_CLASSES, input_shape=(1, 8, 8), chance=0.1
        ),
    )
