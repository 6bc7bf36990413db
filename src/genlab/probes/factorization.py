"""How additively an embedding factors over the attributes of its input: R^2 of emb ~ u(a) + v(b).

Uselis, Dittadi & Oh (2025, catalogue #59) find that combination coverage drives models to a
linearly factored representation, ``emb(c1, c2) ~ u(c1) + v(c2)``, which is what lets them
generalise to unseen combinations. The probe embeds the ``val`` and ``test`` images (every trained
and held-out combination) with the model's ``featurize``, averages per combination, fits the
additive model (an intercept plus one vector per attribute value) by least squares across the
combinations, and reports the share of the combination means' variance it explains as
``model/factor_r2`` (1: perfectly additive). The attribute values are the last ``n_attributes``
target columns (all of them for ``comp_shapes``, the last two positions of ``multilabel_docs``).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes.base import EVAL_CHUNK, EvalContext, ProbeResult
from genlab.registry import NoParams


def additive_r2(means: Tensor, combos: Tensor, sizes: list[int]) -> float:
    """R^2 of the least-squares fit ``means[k] ~ b + sum_a w_a[combos[k, a]]`` (one-hot design)."""
    cols = [torch.ones(len(combos), 1, dtype=means.dtype)]
    for a, s in enumerate(sizes):
        onehot = torch.nn.functional.one_hot(combos[:, a], s).to(means.dtype)
        cols.append(onehot[:, 1:])  # drop one level per attribute: the intercept carries it
    design = torch.cat(cols, 1)
    coef = torch.linalg.lstsq(design, means).solution
    resid = (means - design @ coef).pow(2).sum()
    total = (means - means.mean(0)).pow(2).sum()
    return float(1 - resid / total) if total > 0 else float("nan")


@torch.inference_mode()
def _features(model: nn.Module, x: Tensor) -> Tensor:
    return torch.cat([model.featurize(x[i : i + EVAL_CHUNK]) for i in range(0, len(x), EVAL_CHUNK)])


@PROBES.register("factor_r2", papers=(59,), family="compositional")
def factor_r2(model: nn.Module, ctx: EvalContext, params: NoParams) -> ProbeResult:
    """R^2 of the additive factorisation of the model's embeddings over the attributes (#59)."""
    sizes = ctx.data.info.extra.get("attributes")
    if not sizes or not hasattr(model, "featurize"):
        raise SpecError("factor_r2 needs an attribute task and a model with featurize()")
    was_training = model.training
    model.eval()
    feats, labels = [], []
    for name, split in ctx.splits.items():
        if name.split("/")[0] in ("val", "test"):
            feats.append(_features(model, split.x).double())
            labels.append(split.y[:, -len(sizes) :])  # the attribute values: the last columns
    model.train(was_training)
    feats_all, y = torch.cat(feats), torch.cat(labels)
    combos, inverse = torch.unique(y, dim=0, return_inverse=True)
    sums = torch.zeros(len(combos), feats_all.shape[1], dtype=torch.float64)
    sums.index_add_(0, inverse, feats_all)
    means = sums / torch.bincount(inverse, minlength=len(combos)).unsqueeze(1)
    return {("model", "factor_r2"): additive_r2(means, combos, list(sizes))}
