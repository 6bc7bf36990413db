"""The expected target error of Fisher's linear discriminant on a ``two_gaussian_ood`` task, in
closed form over Monte Carlo draws (De Silva et al., "The Value of Out-of-Distribution Data", ICML
2023, #47).

The paper's analysis: FLD (identity covariance) fitted on ``n`` target and ``m`` OOD samples,
either pooled (plain ERM) or with the class means weighted ``(1 - alpha) * target + alpha * OOD``.
For each of ``draws`` datasets of the task's size (``fld_target_error``), the FLD's target error is
exact (Gaussian tails); the probe returns the mean over draws and its standard error, pooled and
at the best ``alpha`` of an ``alpha_grid``-point grid on [0, 1]. It reads the task's setting from
``info.extra["fld"]``, not the run's model: a run of this probe is how the closed-form numbers
reach the store. The draws are seeded by the run's ``data_seed`` (0 outside the engine).

Metrics on ``test/target``: ``fld_error``, ``fld_error_se``, ``fld_weighted_error``,
``fld_weighted_se``, ``fld_best_alpha``.
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import Field
from torch import nn

from genlab.analysis.fld_theory import fld_target_error
from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import Params


class FLDParams(Params):
    """Params of ``fld_risk``."""

    draws: int = Field(20000, ge=10, le=1_000_000, description="Monte Carlo datasets")
    alpha_grid: int = Field(21, ge=2, le=201, description="alphas in [0, 1] for the weighted FLD")


@PROBES.register("fld_risk", FLDParams, papers=(47,), family="ood", tiny={"draws": 200})
def fld_risk(model: nn.Module, ctx: EvalContext, params: FLDParams) -> ProbeResult:
    """Expected FLD target error, pooled and best-alpha weighted, in closed form (#47)."""
    setting = ctx.data.info.extra.get("fld")
    if setting is None:
        raise SpecError("probe fld_risk needs the two_gaussian_ood task (info.extra['fld'])")
    seed = 0 if ctx.spec is None else int(ctx.spec.data_seed)
    rng = np.random.default_rng([seed, 47])
    args = (setting["n"], setting["m"], setting["d"], setting["separation"], setting["theta"])
    pooled = fld_target_error(*args, None, params.draws, rng)
    alphas = np.linspace(0, 1, params.alpha_grid)
    weighted = [fld_target_error(*args, float(a), params.draws, rng) for a in alphas]
    best = int(np.argmin([w.mean() for w in weighted]))
    root = math.sqrt(params.draws)
    return {
        ("test/target", "fld_error"): float(pooled.mean()),
        ("test/target", "fld_error_se"): float(pooled.std(ddof=1) / root),
        ("test/target", "fld_weighted_error"): float(weighted[best].mean()),
        ("test/target", "fld_weighted_se"): float(weighted[best].std(ddof=1) / root),
        ("test/target", "fld_best_alpha"): float(alphas[best]),
    }
