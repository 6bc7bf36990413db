"""Feature diversity per layer (catalogue #81, "Feature diversity as a scaling factor in
self-supervised CNNs", paper unidentified; the catalogue's definition).

A neuron's activation vector is its output over the ``max_samples`` examples of a split (a channel
of a CNN block: its output averaged over positions, as ``layer_probes`` reads layers: a model's
``block_features``, else the outputs of its activation modules). A layer's diversity is the mean
over pairs of its neurons of ``1 - cos(v_i, v_j)``: 0 when every neuron fires in the same pattern,
1 when the patterns are orthogonal (ReLU features are non-negative, so they stay in [0, 1]).
Neurons that never fire on the split (zero vectors, no direction) are left out and counted.

Metrics on the first held-out split (``val/*`` or ``test/*``): ``layer<i>_diversity`` (0 = shallowest) and ``layer<i>_dead`` (share of silent
neurons); ``model/n_diversity_layers``. Params: ``max_samples``.
"""

from __future__ import annotations

from pydantic import Field
from torch import Tensor

from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes._grads import subsample
from genlab.probes.base import EvalContext, ProbeResult
from genlab.probes.layer_probes import layer_features
from genlab.registry import Params


class DiversityParams(Params):
    """Params of ``feature_diversity``."""

    max_samples: int = Field(500, ge=2, description="examples forming each activation vector")


def diversity(features: Tensor) -> tuple[float, float]:
    """``(mean pairwise 1 - cosine, share of silent neurons)`` of the columns of ``features``
    ``(N, neurons)``; NaN diversity when fewer than two neurons fire."""
    norms = features.norm(dim=0)
    alive = norms > 1e-12
    v = features[:, alive] / norms[alive]
    k = v.shape[1]
    dead = 1.0 - k / features.shape[1]
    if k < 2:
        return float("nan"), dead
    cos = v.T @ v
    mean_cos = (cos.sum() - cos.diagonal().sum()) / (k * (k - 1))
    return float(1.0 - mean_cos), dead


@PROBES.register(
    "feature_diversity", DiversityParams, papers=(81,), family="diag", tiny={"max_samples": 20}
)
def feature_diversity(model, ctx: EvalContext, params: DiversityParams) -> ProbeResult:
    """Mean pairwise ``1 - cosine`` of the neurons' activation vectors, per layer, on the first
    held-out split (#81). Metrics: ``layer<i>_diversity``, ``layer<i>_dead``,
    ``model/n_diversity_layers``. Params: ``max_samples``."""
    held = [k for k in ctx.splits if not k.startswith("train/")]
    if not held:
        raise SpecError("feature_diversity needs a held-out split")
    name = held[0]
    split = ctx.splits[name]
    x = split.x[subsample(len(split), params.max_samples, ctx, salt=81)]
    feats = layer_features(model, x)
    out: ProbeResult = {("model", "n_diversity_layers"): float(len(feats))}
    for i, f in enumerate(feats):
        d, dead = diversity(f)
        out[(name, f"layer{i}_diversity")] = d
        out[(name, f"layer{i}_dead")] = dead
    return out
