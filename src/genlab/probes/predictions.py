"""``predictions``: a run's predicted classes on chosen splits, packed into the store, so that
analyses over finished runs can compare models example by example (agreement, Cohen's kappa)
without reading checkpoints (catalogue #105, Cohen et al., MIDL 2020, compare X-ray models by
their agreement as well as their accuracy).

Per matching split, the argmax classes of ``n`` examples are written base ``C`` (the number of
outputs), ``per_value`` of them per float64 metric ``pred_000``, ``pred_001``, ... (exact: every
packed value stays below 2**53), plus ``pred_n``. ``unpack`` reads them back; ``cohen_kappa``
compares two runs' predictions. Params: ``splits``, glob patterns of split names (default
``test/*``).
"""

from __future__ import annotations

import math
from fnmatch import fnmatchcase

import numpy as np
from pydantic import Field
from torch import nn

from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.probes.basic import require_class_labels
from genlab.registry import Params

MANTISSA = 52  # bits a float64 holds exactly (integers below 2**53)


class PredictionsParams(Params):
    """Params of ``predictions``."""

    splits: list[str] = Field(
        default_factory=lambda: ["test/*"],
        min_length=1,
        description="glob patterns of the splits to record",
    )


def per_value(classes: int) -> int:
    """How many base-``classes`` digits one float64 holds exactly."""
    if classes < 2:
        raise ValueError(f"predictions need at least 2 classes, got {classes}")
    return max(1, int(MANTISSA // math.log2(classes)))


def pack(pred: np.ndarray, classes: int) -> list[float]:
    """Class indices ``pred`` (ints in ``[0, classes)``) as exact float64 values."""
    k = per_value(classes)
    out = []
    for i in range(0, len(pred), k):
        value = 0
        for p in reversed(pred[i : i + k].tolist()):
            value = value * classes + int(p)
        out.append(float(value))
    return out


def unpack(values: list[float], n: int, classes: int) -> np.ndarray:
    """The ``n`` class indices that ``pack`` wrote as ``values``."""
    k, out = per_value(classes), []
    for v in values:
        value = int(v)
        for _ in range(k):
            out.append(value % classes)
            value //= classes
    if len(out) < n:
        raise ValueError(f"packed predictions hold {len(out)} of {n} examples")
    return np.asarray(out[:n], dtype=np.int64)


def cohen_kappa(a: np.ndarray, b: np.ndarray, classes: int) -> float:
    """Cohen's kappa of two raters' labels: ``(p_o - p_e) / (1 - p_e)``, observed agreement
    against the agreement expected from their marginals (NaN when ``p_e`` is 1)."""
    if len(a) != len(b) or not len(a):
        raise ValueError(f"kappa needs two equal, non-empty label sets, got {len(a)} and {len(b)}")
    p_o = float(np.mean(a == b))
    p_e = float(np.dot(np.bincount(a, minlength=classes), np.bincount(b, minlength=classes)))
    p_e /= len(a) ** 2
    return (p_o - p_e) / (1 - p_e) if p_e < 1 else float("nan")


@PROBES.register(
    "predictions", PredictionsParams, papers=(105,), family="domain-shift", tiny={"splits": ["*"]}
)
def predictions(model: nn.Module, ctx: EvalContext, params: PredictionsParams) -> ProbeResult:
    """The argmax class of every example of the matching splits, packed exactly (#105)."""
    require_class_labels(ctx, "predictions")
    out: ProbeResult = {}
    for name in ctx.splits:
        if not any(fnmatchcase(name, p) for p in params.splits):
            continue
        logits = ctx.logits(name)
        if logits.dim() != 2:
            raise SpecError(
                f"probe 'predictions' needs one class per example, got sequence outputs on {name}"
            )
        classes = logits.shape[-1]
        pred = logits.argmax(-1).cpu().numpy()
        out[(name, "pred_n")] = float(len(pred))
        for j, v in enumerate(pack(pred, classes)):
            out[(name, f"pred_{j:03d}")] = v
    if not out:
        raise SpecError(
            f"probe 'predictions': no split matches {params.splits} "
            f"(splits: {', '.join(ctx.splits)})"
        )
    return out
