"""``grokking.linear``: a linear student groks a linear teacher (Levi, Beck & Bar-Sinai, #53).

Setup: ``y = T x``, ``x ~ N(0, I_d)``, ``T_ij ~ N(0, 1/d)``, ``N = r d`` training samples, a linear
student ``S`` trained from ``S_0`` (i.i.d. ``N(0, s²/d)``) by full-batch gradient descent with step
``η`` and weight decay ``γ`` on ``(1/2N) Σ |S x - y|²``. A test sample is "right" when
``|(S-T)x|²/d_out <= ε``. Levi et al. show that this thresholded accuracy jumps late and sharply
although the test error falls smoothly, and predict the jump from the spectrum of the training
covariance. Our prediction formula (derived in ``docs/grokking.md``): in each eigendirection of the
empirical covariance (eigenvalue ``μ``, Marchenko-Pastur distributed with ratio ``λ = d/N``),
``r = 1 - η(μ+γ)``, and the relative test error is

    g(t) = ∫ ρ_MP(μ; λ) [ (γ/(μ+γ)) (1 - r^t) + r^t ]² + s² r^{2t} dμ.

With ``d_out`` outputs, ``|(S-T)x|²/d_out ≈ g(t) χ²_{d_out}/d_out``, so the accuracy crosses 50% at
the first ``t`` with ``g(t) <= ε d_out / median(χ²_{d_out})``: the predicted grokking time.
Assumptions (checked, else ``SpecError``): ``N > d`` (ratio > 1), ``d >= 50``, stable monotone GD
``η ((1+√λ)² + γ) < 1``, and a threshold the error can reach (``g(∞) < target``).
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from pydantic import Field
from scipy import integrate, stats

from genlab.analysis.milestones import first_step
from genlab.claims import register
from genlab.claims.base import Claim, ClaimResult
from genlab.claims.grokking_common import curves, verdict_from_passes
from genlab.errors import SpecError
from genlab.registry import Params
from genlab.report.plots import save_figure
from genlab.spec import RunSpec, parse_spec

TEST = "test/fresh"


def relative_error(t: float, lam: float, lr: float, wd: float, init_scale: float) -> float:
    """``g(t)``: the predicted test error relative to the teacher's output power (module doc)."""
    lo, hi = (1 - math.sqrt(lam)) ** 2, (1 + math.sqrt(lam)) ** 2

    def integrand(mu: float) -> float:
        rho = math.sqrt(max((hi - mu) * (mu - lo), 0.0)) / (2 * math.pi * lam * mu)
        r = 1 - lr * (mu + wd)
        a = wd / (mu + wd)
        return rho * ((a * (1 - r**t) + r**t) ** 2 + init_scale**2 * r ** (2 * t))

    return integrate.quad(integrand, lo, hi, limit=200)[0]


def target_error(epsilon: float, d_out: int) -> float:
    """The relative error at which half the test samples fall under the threshold."""
    return epsilon * d_out / stats.chi2.median(d_out)


@lru_cache(maxsize=256)
def predicted_grokking_step(
    d_in: int,
    d_out: int,
    ratio: float,
    lr: float,
    wd: float,
    epsilon: float,
    init_scale: float = 0.0,
) -> int:
    """First GD step at which the predicted thresholded test accuracy reaches 50% (module doc).

    Raises ``SpecError`` when the configuration is outside the formula's assumptions.
    """
    lam = 1 / ratio
    if ratio <= 1:
        raise SpecError(
            f"claim.ratios: the prediction needs N > d_in (sample ratio > 1), got {ratio}"
        )
    if d_in < 50:
        raise SpecError(f"claim.d_ins: the Marchenko-Pastur limit needs d_in >= 50, got {d_in}")
    if lr * ((1 + math.sqrt(lam)) ** 2 + wd) >= 1:
        raise SpecError(
            f"claim.lr: GD must be stable and monotone, lr * ((1+sqrt(d_in/N))² + wd) < 1; got "
            f"lr={lr}, ratio={ratio}, wd={wd} (use lr < {1 / ((1 + math.sqrt(lam)) ** 2 + wd):.3g})"
        )
    target = target_error(epsilon, d_out)
    if relative_error(1e9, lam, lr, wd, init_scale) >= target:
        raise SpecError(
            f"claim.weight_decays: with wd={wd} and ratio={ratio} the test error never falls "
            "to the "
            f"threshold (epsilon={epsilon}); the predicted grokking time is infinite"
        )
    hi = 1
    while relative_error(hi, lam, lr, wd, init_scale) > target:
        hi *= 2
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if relative_error(mid, lam, lr, wd, init_scale) > target else (lo, mid)
    return hi


class LinearConfig(Params):
    """Grid of linear teacher-student settings: each listed ``d_in`` at the first ratio and weight
    decay, each further ratio and weight decay at the first ``d_in``."""

    d_ins: list[int] = Field([100, 200, 400], min_length=1)
    ratios: list[float] = Field([2.0, 1.5, 4.0], min_length=1, description="N / d_in")
    weight_decays: list[float] = Field([0.0, 0.01, 0.03], min_length=1)
    d_out: int = Field(20, ge=1)
    lr: float = Field(0.1, gt=0, description="GD step size")
    epsilon: float = Field(0.01, gt=0, lt=1, description="accuracy threshold on |ŷ-y|²/d_out")
    init_scale: float = Field(0.0, ge=0, le=1)
    steps_factor: float = Field(2.0, gt=0, description="budget = steps_factor x predicted step")
    seeds: int = Field(3, ge=1)
    max_rel_error: float = Field(0.1, gt=0, description="stated before running: 10%")


def settings(cfg: LinearConfig) -> list[tuple[int, float, float]]:
    """The ``(d_in, ratio, wd)`` grid of the module doc (one-at-a-time around the first values)."""
    d0, r0, w0 = cfg.d_ins[0], cfg.ratios[0], cfg.weight_decays[0]
    out = [(d, r0, w0) for d in cfg.d_ins]
    out += [(d0, r, w0) for r in cfg.ratios[1:]] + [(d0, r0, w) for w in cfg.weight_decays[1:]]
    return list(dict.fromkeys(out))


class LinearGrokking(Claim):
    """Thresholded accuracy of a linear student jumps at the predicted time (Levi et al., #53)."""

    id = "grokking.linear"
    family = "grokking"
    papers = (53,)
    statement = (
        "Linear teacher-student, full-batch GD: in every run (>= 1 seed per setting over input "
        "dimension, sample ratio and weight decay) the thresholded test accuracy first reaches 50% "
        "within 10% of the predicted step (Marchenko-Pastur formula), the test MSE never rises, "
        "and "
        "the jump is sharp: the MSE falls < 3x while accuracy climbs 10%->90%, after falling "
        ">= 10x "
        "before it."
    )
    Config = LinearConfig
    budgets = {
        "smoke": {"d_ins": [100], "ratios": [2.0], "weight_decays": [0.0, 0.01], "seeds": 2},
        "full": {},
    }
    MAX_JUMP_FALL, MIN_PRE_FALL = 3.0, 10.0

    def specs(self, cfg: LinearConfig) -> list[RunSpec]:
        out = []
        for d, r, w in settings(cfg):
            t = predicted_grokking_step(d, cfg.d_out, r, cfg.lr, w, cfg.epsilon, cfg.init_scale)
            for s in range(cfg.seeds):
                out.append(
                    parse_spec(
                        {
                            "task": {
                                "name": "linear_teacher",
                                "params": {"d_in": d, "d_out": cfg.d_out, "sample_ratio": r},
                            },
                            "model": {
                                "name": "linear_student",
                                "params": {"init_scale": cfg.init_scale},
                            },
                            "method": {"name": "mse"},
                            "optimizer": {"name": "sgd", "lr": cfg.lr, "weight_decay": w},
                            "steps": max(1, math.ceil(cfg.steps_factor * t)),
                            "dtype": "float64",
                            "eval": {
                                "every": 1,
                                "log_points": 0,
                                "probes": [
                                    {
                                        "name": "threshold_accuracy",
                                        "params": {"epsilon": cfg.epsilon},
                                    }
                                ],
                            },
                            "checkpoint_every": 100_000,
                            "seed": s,
                            "data_seed": s,
                        }
                    )
                )
        return out

    def predictions(self, cfg: LinearConfig) -> pd.DataFrame:
        """Per run id: its setting, seed and predicted grokking step."""
        rows = []
        for spec in self.specs(cfg):
            tp = spec.task.params
            t = predicted_grokking_step(
                tp["d_in"],
                cfg.d_out,
                tp["sample_ratio"],
                cfg.lr,
                spec.optimizer.weight_decay,
                cfg.epsilon,
                cfg.init_scale,
            )
            rows.append(
                {
                    "run_id": spec.run_id,
                    "d_in": tp["d_in"],
                    "ratio": tp["sample_ratio"],
                    "wd": spec.optimizer.weight_decay,
                    "seed": spec.seed,
                    "t_pred": t,
                }
            )
        return pd.DataFrame(rows).set_index("run_id")

    def judge(self, cfg: LinearConfig, runs: pd.DataFrame, metrics: pd.DataFrame) -> ClaimResult:
        table = self.predictions(cfg)
        status = runs.set_index("run_id")["status"].reindex(table.index)
        table["t_meas"] = first_step(metrics, TEST, "accuracy", 0.5).reindex(table.index)
        table["rel_error"] = (table["t_meas"] - table["t_pred"]).abs() / table["t_pred"]
        mse = curves(metrics, TEST, "mse").reindex(columns=table.index)
        mse0 = metrics[
            (metrics["split"] == TEST) & (metrics["metric"] == "mse") & (metrics["step"] == 0)
        ].set_index("run_id")["value"]
        t10 = first_step(metrics, TEST, "accuracy", 0.1).reindex(table.index)
        t90 = first_step(metrics, TEST, "accuracy", 0.9).reindex(table.index)

        def mse_at(rid: str, t: float) -> float:
            return float(mse[rid].get(t, np.nan)) if not math.isnan(t) else math.nan

        table["mse_rises"] = [
            bool((mse[r].dropna().diff() > 1e-9 * mse[r].max()).any()) for r in table.index
        ]
        table["mse_fall_during_jump"] = [mse_at(r, t10[r]) / mse_at(r, t90[r]) for r in table.index]
        table["mse_fall_before_jump"] = [
            mse0.get(r, np.nan) / mse_at(r, t10[r]) for r in table.index
        ]
        table["passes"] = (
            (status == "done")
            & (table["rel_error"] <= cfg.max_rel_error)
            & ~table["mse_rises"]
            & (table["mse_fall_during_jump"] < self.MAX_JUMP_FALL)
            & (table["mse_fall_before_jump"] >= self.MIN_PRE_FALL)
        )
        n, n_ok = len(table), int(table["passes"].sum())
        stat = {
            "runs": float(n),
            "runs_passing": float(n_ok),
            "runs_on_time": float((table["rel_error"] <= cfg.max_rel_error).sum()),
            "median_rel_error": float(table["rel_error"].median()),
            "max_rel_error": float(table["rel_error"].max()),
            "max_mse_fall_during_jump": float(table["mse_fall_during_jump"].max()),
            "min_mse_fall_before_jump": float(table["mse_fall_before_jump"].min()),
        }
        evidence = (
            f"{n_ok}/{n} runs pass; {stat['runs_on_time']:.0f}/{n} grokked within "
            f"{cfg.max_rel_error:.0%} of the predicted step "
            f"(median relative error {stat['median_rel_error']:.3f}, "
            f"max {stat['max_rel_error']:.3f}; "
            f"NaN = never reached 50% in budget), test MSE never rising in "
            f"{int((~table['mse_rises']).sum())}/{n} runs, falling at most "
            f"{stat['max_mse_fall_during_jump']:.2f}x during the 10->90% accuracy jump "
            f"and at least "
            f"{stat['min_mse_fall_before_jump']:.1f}x before it; settings (d_in, N/d_in, wd) "
            f"{settings(cfg)}, epsilon {cfg.epsilon}, d_out {cfg.d_out}, lr {cfg.lr}."
        )
        return ClaimResult(
            self.id, verdict_from_passes(n_ok, n), stat, evidence, table.reset_index()
        )

    def figure(self, cfg: LinearConfig, metrics: pd.DataFrame, path: Path) -> Path | None:
        table = self.predictions(cfg)
        acc, mse = curves(metrics, TEST, "accuracy"), curves(metrics, TEST, "mse")
        if acc.empty:
            return None
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
        a1b = a1.twinx()
        for i, rid in enumerate(acc.columns):
            a1.plot(acc.index, acc[rid], color=f"C{i % 10}", lw=1)
            a1b.plot(mse.index, mse[rid], ":", color=f"C{i % 10}", lw=0.8)
        a1b.set(yscale="log", ylabel="test MSE / d_out (dotted)")
        a1.set(
            xscale="log",
            xlabel="GD step",
            ylabel="thresholded test accuracy (solid)",
            title=f"{self.id}: accuracy jumps, MSE falls smoothly",
        )
        t50 = first_step(metrics, TEST, "accuracy", 0.5).reindex(table.index)
        a2.scatter(table["t_pred"], t50, s=18)
        lim = [0, float(table["t_pred"].max()) * 1.15]
        a2.plot(lim, lim, color="grey", lw=0.8)
        a2.fill_between(
            lim,
            [v * (1 - cfg.max_rel_error) for v in lim],
            [v * (1 + cfg.max_rel_error) for v in lim],
            color="grey",
            alpha=0.15,
        )
        a2.set(
            xlabel="predicted grokking step",
            ylabel="measured step (accuracy >= 50%)",
            title="measured vs predicted (band: stated tolerance)",
        )
        return save_figure(fig, path)


register(LinearGrokking())
