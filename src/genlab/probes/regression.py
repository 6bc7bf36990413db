"""Errors of a regression model per split, in the units three fields report them in.

``regression_error`` logs, over every target value of a split:

- ``mse``: the mean squared error;
- ``nmse``: the MSE over the targets' variance (0: perfect, 1: predicting the split's mean), and
  ``r2`` = 1 - ``nmse``, the share of variance explained (graph property prediction, SIR-GCN, #35);
- ``rel_l2``: the mean over examples of ``|ŷ - y|₂ / |y|₂``, the relative L2 error that neural
  operators report (Kossaifi et al., MG-TFNO, #29);
- ``nde``: ``Σ(ŷ - y)² / Σy²``, the normalised disaggregation error of load monitoring (SIDED and
  AMDA, #36).
"""

from __future__ import annotations

from torch import nn

from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import NoParams

TINY = 1e-12


@PROBES.register("regression_error", NoParams, papers=(35, 29, 36))
def regression_error(model: nn.Module, ctx: EvalContext, params: NoParams) -> ProbeResult:
    """``mse``, ``nmse``, ``r2``, ``rel_l2`` and ``nde`` per regression split (#35, #29, #36)."""
    if ctx.data.info.kind != "regression":
        raise SpecError("probe 'regression_error' needs a regression task (real-valued targets)")
    out: ProbeResult = {}
    for name, split in ctx.splits.items():
        pred, y = ctx.logits(name).double(), split.y.double()
        if pred.shape != y.shape:
            pred = pred.reshape(y.shape)
        err = (pred - y).pow(2)
        mse, var = err.mean().item(), y.var(unbiased=False).item()
        rows, y_rows = err.reshape(len(err), -1), y.reshape(len(y), -1)
        per_example = rows.sum(1).sqrt() / y_rows.norm(dim=1).clamp_min(TINY)
        out[(name, "mse")] = mse
        out[(name, "nmse")] = mse / max(var, TINY)
        out[(name, "r2")] = 1.0 - mse / max(var, TINY)
        out[(name, "rel_l2")] = per_example.mean().item()
        out[(name, "nde")] = err.sum().item() / max(y.pow(2).sum().item(), TINY)
    return out
