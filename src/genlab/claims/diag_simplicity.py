"""``diag.simplicity_bias_components`` (Teney et al., "Neural Redshift", CVPR 2024, #85).

Random ReLU MLPs compute simple functions whatever their weight scale; the simplicity is not a
property of neural networks as such but of their components: swap the activation (tanh, at a
large weight scale) and the sampled functions get more complex; add residual connections and
layer norm back and they get simpler again. No training: networks are sampled at initialisation
(``genlab.probes.complexity.sample_complexity``), so ``specs`` is empty.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from pydantic import Field  # noqa: E402
from scipy.stats import mannwhitneyu  # noqa: E402

from genlab.claims import register  # noqa: E402
from genlab.claims.base import Claim, ClaimResult, Verdict  # noqa: E402
from genlab.probes.complexity import (  # noqa: E402
    Arch,
    fourier_complexity,
    lz_complexity,
    sample_complexity,
)
from genlab.registry import Params  # noqa: E402
from genlab.report.plots import save_figure
from genlab.spec import RunSpec  # noqa: E402


class SimplicityConfig(Params):
    """Three arms of random MLPs on a grid of ``[-1, 1]^2``: ReLU, the contrast activation, and the
    contrast activation with residual connections and layer norm."""

    contrast_activation: Literal["relu", "tanh", "gelu", "sin", "square"] = Field(
        "tanh", description="activation of the contrast arms ('relu': negative control)"
    )
    measure: Literal["fourier", "lz"] = Field("fourier", description="complexity measure")
    depth: int = Field(4, ge=1, le=16)
    width: int = Field(64, ge=1, le=1024)
    scale: float = Field(4.0, gt=0, le=32, description="weight scale (std * sqrt(fan_in))")
    samples: int = Field(100, ge=5, le=2000, description="random networks per arm")
    grid: int = Field(32, ge=8, le=128)
    seed: int = Field(0, ge=0)


def arms(cfg: SimplicityConfig) -> dict[str, Arch]:
    common = {"depth": cfg.depth, "width": cfg.width, "scale": cfg.scale}
    return {
        "relu": Arch("relu", **common),
        "contrast": Arch(cfg.contrast_activation, **common),
        "contrast_res_ln": Arch(cfg.contrast_activation, residual=True, layer_norm=True, **common),
    }


def shift(higher: np.ndarray, lower: np.ndarray) -> tuple[float, float]:
    """One-sided Mann-Whitney test that ``higher`` is stochastically larger than ``lower``: the
    p-value and the common-language effect size ``U / (n1 n2)`` = P(higher > lower)."""
    res = mannwhitneyu(higher, lower, alternative="greater")
    return float(res.pvalue), float(res.statistic) / (len(higher) * len(lower))


class SimplicityBiasComponents(Claim):
    """ReLU MLPs sample low-complexity functions; the activation, residuals and layer norm move
    the complexity distribution (Teney et al., #85)."""

    id = "diag.simplicity_bias_components"
    family = "diag"
    papers = (85,)
    MAX_NOISE_RATIO = 0.5  # "low complexity": median <= half that of i.i.d. noise maps
    MAX_P, MIN_EFFECT = 0.01, 0.7  # "moves the distribution": p < 0.01 and P(X > Y) >= 0.7
    statement = (
        "Random MLPs (depth 4, width 64, weights N(0, scale^2/fan_in), scale 4) on a 32x32 grid of "
        "[-1,1]^2, `samples` networks per arm, each arm its own seeds: (1) the median complexity "
        "of ReLU networks is <= 0.5x the median of i.i.d. Gaussian noise maps; (2) the contrast "
        "activation (tanh) gives higher complexity than ReLU, one-sided Mann-Whitney p < 0.01 with "
        "effect size P(contrast > relu) >= 0.7; (3) removing residual connections and layer norm "
        "from the contrast network raises its complexity by the same test (p < 0.01, P >= 0.7)."
    )
    Config = SimplicityConfig
    budgets = {"smoke": {"samples": 30}, "full": {"samples": 200, "grid": 64}}

    def __init__(self) -> None:
        self._cache: dict[str, dict[str, np.ndarray]] = {}

    def specs(self, cfg: SimplicityConfig) -> list[RunSpec]:
        return []  # random networks at initialisation; nothing to train

    def samples(self, cfg: SimplicityConfig) -> dict[str, np.ndarray]:
        """Complexities per arm and of i.i.d. noise maps (cached per config: judge and figure)."""
        key = self.config_id(cfg)
        if key not in self._cache:
            out = {
                name: sample_complexity(
                    arch, cfg.samples, 1000 * cfg.seed + i, cfg.grid, (cfg.measure,)
                )[cfg.measure]
                for i, (name, arch) in enumerate(arms(cfg).items())
            }
            rng = np.random.default_rng(cfg.seed)
            noise = rng.standard_normal((cfg.samples, cfg.grid, cfg.grid))
            score = fourier_complexity if cfg.measure == "fourier" else lz_complexity
            out["noise"] = np.array([score(n) for n in noise])
            self._cache = {key: out}
        return self._cache[key]

    def judge(
        self, cfg: SimplicityConfig, runs: pd.DataFrame, metrics: pd.DataFrame
    ) -> ClaimResult:
        s = self.samples(cfg)
        med = {k: float(np.median(v)) for k, v in s.items()}
        p_act, e_act = shift(s["contrast"], s["relu"])
        p_comp, e_comp = shift(s["contrast"], s["contrast_res_ln"])
        low = med["relu"] <= self.MAX_NOISE_RATIO * med["noise"]
        act = p_act < self.MAX_P and e_act >= self.MIN_EFFECT
        comp = p_comp < self.MAX_P and e_comp >= self.MIN_EFFECT
        verdict: Verdict = "reproduced" if low and act and comp else "not reproduced"
        stat = {
            **{f"median_{k}": v for k, v in med.items()},
            "p_activation": p_act, "effect_activation": e_act,
            "p_components": p_comp, "effect_components": e_comp,
            "relu_simple": float(low), "activation_moves": float(act),
            "components_move": float(comp),
        }  # fmt: skip
        a = arms(cfg)
        evidence = (
            f"{cfg.measure} complexity, {cfg.samples} nets per arm: median ReLU {med['relu']:.3f} "
            f"vs noise {med['noise']:.3f} (low: {low}); {a['contrast'].label()} "
            f"{med['contrast']:.3f} vs ReLU: p={p_act:.2g}, P(>)={e_act:.2f} (moves: {act}); "
            f"{a['contrast_res_ln'].label()} {med['contrast_res_ln']:.3f}, removing residual+LN: "
            f"p={p_comp:.2g}, P(>)={e_comp:.2f} (moves: {comp})."
        )
        table = pd.DataFrame(
            [{"arm": k, "arch": a[k].label() if k in a else "iid-noise", "median": med[k],
              "q25": float(np.quantile(v, 0.25)), "q75": float(np.quantile(v, 0.75))}
             for k, v in s.items()]
        )  # fmt: skip
        return ClaimResult(self.id, verdict, stat, evidence, table)

    def figure(self, cfg: SimplicityConfig, metrics: pd.DataFrame, path: Path) -> Path | None:
        s = self.samples(cfg)
        a = arms(cfg)
        fig, ax = plt.subplots(figsize=(6, 3.8))
        labels = [a[k].label() if k in a else "iid noise" for k in s]
        ax.boxplot(list(s.values()), tick_labels=labels)
        ax.set(ylabel=f"{cfg.measure} complexity", title=self.id)
        ax.tick_params(axis="x", labelsize=7)
        return save_figure(fig, path)


register(SimplicityBiasComponents())
