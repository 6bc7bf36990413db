"""``diag.sharpness_not_sufficient`` (Wen, Li & Ma, NeurIPS 2023, #97).

The paper shows, for two-layer ReLU networks, settings where flatness implies generalization and
settings where the flattest models do not generalize. The empirical counterpart here: on a zoo of
MLPs on digits (``genlab.zoo``, hyperparameters and label noise varied), no sharpness measure of
the ``sharpness`` probe (SAM and ASAM ball sharpness, Hessian top eigenvalue, Hessian trace)
ranks the generalization gap well: Kendall's tau of every one of them with the gap stays below
``MIN_TAU`` = 0.3 (fixed before running; 0.3 is a moderate rank correlation, about what the
better measures of Jiang et al.'s "Fantastic Generalization Measures" reach).

Negative control (``control="gap"``): the gap itself joins the measures, tau = 1, so the claim
must come out "not reproduced" — it checks that the predicate can fail, not the science.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from pydantic import Field  # noqa: E402

from genlab.claims import register  # noqa: E402
from genlab.claims.base import Claim, ClaimResult, Verdict  # noqa: E402
from genlab.registry import Params  # noqa: E402
from genlab.spec import RunSpec  # noqa: E402

MEASURES = ("sam_sharpness", "asam_sharpness", "hessian_top_eig", "hessian_trace")


class SharpnessZooConfig(Params):
    """A zoo of MLPs on digits with the four sharpness measures taken at the end of training."""

    control: Literal["none", "gap"] = Field(
        "none", description="'gap': add the gap itself as a measure (negative control)"
    )
    size: int = Field(16, ge=4)
    steps: int = Field(600, ge=1)
    train_size: int = Field(500, ge=10, le=1700)
    vary: dict[str, list[Any]] = Field(
        default_factory=lambda: {"width": [32, 128, 512], "lr": [3e-4, 3e-3],
                                 "batch_size": [32, 512], "label_noise": [0.0, 0.2]}
    )  # fmt: skip
    max_samples: int = Field(256, ge=1)
    power_iters: int = Field(20, ge=1)
    hutchinson: int = Field(10, ge=1)
    seed: int = Field(0, ge=0)


class SharpnessNotSufficient(Claim):
    """On a zoo, no sharpness measure ranks the generalization gap well (Wen, Li & Ma, #97)."""

    id = "diag.sharpness_not_sufficient"
    family = "diag"
    papers = (97,)
    MIN_TAU = 0.3  # fixed before running
    statement = (
        "On a zoo of MLPs on digits (width, lr, batch size and label noise varied), Kendall's tau "
        "between the generalization gap (train - test accuracy) and each of SAM sharpness, ASAM "
        "sharpness, Hessian top eigenvalue and Hessian trace (training loss, end of training) is "
        "below 0.3 for every measure: flatness alone does not predict generalization."
    )
    Config = SharpnessZooConfig
    budgets = {
        "smoke": {"size": 6, "steps": 150, "train_size": 300, "max_samples": 64,
                  "power_iters": 5, "hutchinson": 3,
                  "vary": {"width": [16, 64, 256], "label_noise": [0.0, 0.3]}},
        "full": {},
    }  # fmt: skip

    def zoo(self, cfg: SharpnessZooConfig) -> list[tuple[dict, RunSpec]]:
        from genlab.zoo import ZooConfig, zoo_specs

        params = {"max_samples": cfg.max_samples, "power_iters": cfg.power_iters,
                  "hutchinson": cfg.hutchinson}  # fmt: skip
        return zoo_specs(ZooConfig(
            size=cfg.size, vary=cfg.vary, probes=["sharpness"], steps=cfg.steps,
            train_size=cfg.train_size, seed=cfg.seed, probe_params={"sharpness": params},
        ))  # fmt: skip

    def specs(self, cfg: SharpnessZooConfig) -> list[RunSpec]:
        return [s for _, s in self.zoo(cfg)]

    def judge(
        self, cfg: SharpnessZooConfig, runs: pd.DataFrame, metrics: pd.DataFrame
    ) -> ClaimResult:
        from genlab.zoo.run import frame
        from genlab.zoo.score import cmi_score, kendall_tau

        df = frame(self.zoo(cfg), runs, metrics)
        names = list(MEASURES)
        if cfg.control == "gap" and len(df):
            df["gap_control"] = df["gap"]
            names.append("gap_control")
        stat: dict[str, float] = {"models": float(len(df))}
        g = df["gap"].to_numpy(float) if len(df) else np.array([])
        for name in names:
            m = df[name].to_numpy(float) if name in df else np.full(len(df), np.nan)
            stat[f"tau_{name}"], stat[f"p_{name}"] = kendall_tau(m, g)
            stat[f"cmi_{name}"] = cmi_score(m, g, df[list(cfg.vary)]) if len(df) else np.nan
        taus = [stat[f"tau_{n}"] for n in names]
        finite = [t for t in taus if np.isfinite(t)]
        if len(df) < 4 or len(finite) < len(MEASURES):
            verdict: Verdict = "inconclusive"
        else:
            verdict = "reproduced" if max(finite) < self.MIN_TAU else "not reproduced"
        stat["max_tau"] = float(max(finite)) if finite else float("nan")
        evidence = (
            f"On {len(df)} models, tau with the gap: "
            + ", ".join(f"{n} {stat[f'tau_{n}']:+.3f}" for n in names)
            + f" (claim needs every tau < {self.MIN_TAU:g}; max {stat['max_tau']:+.3f})."
        )
        cols = ["run_id", *cfg.vary, "gap", *names]
        return ClaimResult(self.id, verdict, stat, evidence, df[[c for c in cols if c in df]])

    def figure(self, cfg: SharpnessZooConfig, metrics: pd.DataFrame, path: Path) -> Path | None:
        from genlab.report.plots import gap_scatter as scatter
        from genlab.zoo.run import frame

        runs = pd.DataFrame({"run_id": metrics["run_id"].unique(), "status": "done"})
        df = frame(self.zoo(cfg), runs, metrics)
        names = [c for c in MEASURES if c in df]
        if df.empty or not names:
            return None
        return scatter(df, names, None, path, self.id)


register(SharpnessNotSufficient())
