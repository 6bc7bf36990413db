"""``grokking.phases``: the four learning phases of Liu et al., "Towards Understanding Grokking:
An Effective Theory of Representation Learning" (NeurIPS 2022, catalogue #107).

An embedding + MLP decoder on modular addition, trained full batch with AdamW over a grid of
learning rate x weight decay, lands in comprehension, grokking, memorization or confusion (rules in
``genlab.analysis.phases``); the residue embeddings are structured (representation quality, here the
share of embedding power in the top Fourier frequencies, see ``genlab.probes.grokking``) only where
the model generalizes.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from pydantic import Field

from genlab.analysis.phases import PHASES, grid_specs, phase_table, plot_phase_diagram
from genlab.claims import register
from genlab.claims.base import Claim, ClaimResult
from genlab.claims.grokking_common import TEST, TRAIN, verdict_from_passes
from genlab.registry import Params
from genlab.spec import RunSpec


class PhasesConfig(Params):
    """A grid over two numeric spec fields (dotted paths), embedding-MLP on modular addition."""

    p: int = Field(23, ge=5, le=200)
    train_fraction: float = Field(0.6, gt=0, lt=1)
    width: int = Field(128, ge=1)
    embed_dim: int = Field(16, ge=1)
    x: str = Field("optimizer.weight_decay", description="numeric spec field on the x axis")
    xs: list[float] = Field([0.0, 0.3, 1.0, 3.0, 10.0], min_length=1)
    y: str = Field("optimizer.lr", description="numeric spec field on the y axis")
    ys: list[float] = Field([3e-4, 1e-3, 3e-3, 1e-2, 3e-2], min_length=1)
    steps: int = Field(2000, ge=1)
    seeds: int = Field(1, ge=1)
    level: float = Field(
        0.9, gt=0, le=1, description="accuracy level of the phase rules (Liu et al.: 90%)"
    )
    delay_frac: float = Field(
        0.1, gt=0, lt=1, description="grokking = test later than train by > this x steps"
    )
    rq_high: float = Field(0.5, gt=0, lt=1, description="representation quality counted as high")


def base_spec(cfg: PhasesConfig) -> dict:
    return {
        "task": {
            "name": "modular_arithmetic",
            "params": {"p": cfg.p, "train_fraction": cfg.train_fraction},
        },
        "model": {
            "name": "mlp",
            "params": {"width": cfg.width, "depth": 2, "embed_dim": cfg.embed_dim},
        },
        "optimizer": {"name": "adamw", "lr": 1e-3, "weight_decay": 0.0},
        "steps": cfg.steps,
        "checkpoint_every": 100_000,
        "eval": {
            "every": max(1, cfg.steps // 50),
            "log_points": 20,
            "probes": [{"name": "accuracy"}, {"name": "rep_quality"}],
        },
        "stop": [{"split": TEST, "metric": "accuracy", "threshold": cfg.level}],
    }


class Phases(Claim):
    """Four phases on a learning-rate x weight-decay grid; structure where it generalizes (#107)."""

    id = "grokking.phases"
    family = "grokking"
    papers = (107,)
    statement = (
        "On a weight-decay x learning-rate grid (embedding-MLP, modular addition, full batch), all "
        "four phases of Liu et al. appear (90% accuracy rules, grokking = test > budget/10 steps "
        "after train), and representation quality (top-3 Fourier share of the residue embeddings) "
        "is high (>= 0.5) in the median comprehension/grokking cell and low (< 0.5) in the median "
        "memorization/confusion cell."
    )
    Config = PhasesConfig
    budgets = {
        "smoke": {"xs": [0.0, 1.0, 3.0, 10.0], "ys": [3e-2], "steps": 1500},
        "full": {},
    }

    def specs(self, cfg: PhasesConfig) -> list[RunSpec]:
        return grid_specs(base_spec(cfg), cfg.x, cfg.xs, cfg.y, cfg.ys, cfg.seeds)

    def judge(self, cfg: PhasesConfig, runs: pd.DataFrame, metrics: pd.DataFrame) -> ClaimResult:
        t = phase_table(
            self.specs(cfg), cfg.x, cfg.y, metrics, TRAIN, TEST, cfg.level, cfg.delay_frac
        )
        counts = t["phase"].value_counts().reindex(PHASES, fill_value=0)
        gen = t["phase"].isin(["comprehension", "grokking"])
        rq_gen, rq_not = t.loc[gen, "rep_quality"].median(), t.loc[~gen, "rep_quality"].median()
        parts = {
            "all_four_phases": bool((counts > 0).all()),
            "rq_high_only_where_generalizing": bool(rq_gen >= cfg.rq_high and rq_not < cfg.rq_high),
        }
        stat = {f"cells_{k}": float(v) for k, v in counts.items()}
        stat |= {
            "median_rq_generalizing": float(rq_gen),
            "median_rq_not_generalizing": float(rq_not),
        }
        stat |= {k: float(v) for k, v in parts.items()}
        rq_by = t.groupby("phase")["rep_quality"].median()
        stat |= {f"median_rq_{k}": float(rq_by.get(k, float("nan"))) for k in PHASES}
        n_ok = sum(parts.values())
        verdict = "reproduced" if n_ok == 2 else "not reproduced" if n_ok == 0 else "inconclusive"
        verdict = verdict if len(t) else verdict_from_passes(0, 0)
        evidence = (
            f"phases over {len(t)} runs: "
            + ", ".join(f"{k} {v}" for k, v in counts.items())
            + f"; median representation quality {rq_gen:.2f} where it generalizes vs {rq_not:.2f} "
            f"elsewhere (high >= {cfg.rq_high}; by phase: "
            + ", ".join(f"{k} {stat[f'median_rq_{k}']:.2f}" for k in PHASES)
            + f"); grid {cfg.x}={cfg.xs} x {cfg.y}={cfg.ys}, "
            f"p={cfg.p}, frac={cfg.train_fraction}, {cfg.steps} steps."
        )
        return ClaimResult(self.id, verdict, stat, evidence, t)

    def figure(self, cfg: PhasesConfig, metrics: pd.DataFrame, path: Path) -> Path | None:
        t = phase_table(
            self.specs(cfg), cfg.x, cfg.y, metrics, TRAIN, TEST, cfg.level, cfg.delay_frac
        )
        return plot_phase_diagram(
            t, cfg.x, cfg.y, path, f"{self.id} (p={cfg.p}, frac={cfg.train_fraction})"
        )


register(Phases())
