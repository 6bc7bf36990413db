"""``grokking.phases`` (Liu et al. 2022, #107): an embedding + MLP decoder on modular addition,
trained full batch over a grid of weight decay x learning rate, lands in comprehension, grokking,
memorization or confusion (``genlab.analysis.phases``), and its residue embeddings are structured
only where it generalizes.

Differences from the paper: modular addition mod 23 with concatenated embeddings (Liu et al. sum
them, on non-modular addition and on modular tables); representation quality is the share of the
embedding power in its top-3 Fourier frequencies (``rep_quality``), not the parallelogram index,
which is for non-modular addition. The Fourier share is also high in confusion cells, where heavy
weight decay leaves tiny, gradient-shaped embeddings (documented in docs/grokking.md).

Against the authors' code (``ejmichaud/grokking-squared``, ``scripts/run_toy_model_ng.py``: their
toy sums 1-dimensional learned embeddings of the two symbols of non-modular addition, p = 10 by
default, unordered pairs i <= j; decodes with a tanh MLP, width 200, depth 3, regressed by MSE onto
random symbol vectors; trains with Adam, the grid's learning rate and weight decay on the decoder
only; 80% of the pairs by default). Here: cross entropy over the p classes, ReLU, 16-dimensional
embeddings, AdamW with the grid's learning rate and weight decay on the whole model, 60% of the
table (the leak-free split of unordered pairs), one seed per cell.

Measured history (the 80% positive control, the smoke grid): docs/grokking.md (grokking.phases).
"""

from __future__ import annotations

import math

import pandas as pd
from pydantic import Field

from genlab.analysis.phases import PHASES, classify
from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.grokking._common import TEST, TRAIN, MLPConfig, mlp_base
from genlab.claims.guards import Fit, NotApplicable
from genlab.claims.measures import Extreme, Final, FirstStep
from genlab.design import phase_design
from genlab.report.claim_figures import PhaseGrid


class PhasesConfig(MLPConfig):
    """A grid over two numeric spec fields (dotted paths) at one train fraction."""

    train_fraction: float = Field(0.6, gt=0, lt=1)
    x: str = Field("optimizer.weight_decay", description="numeric spec field on the x axis")
    xs: list[float] = Field([0.0, 0.3, 1.0, 3.0, 10.0], min_length=1)
    y: str = Field("optimizer.lr", description="numeric spec field on the y axis")
    ys: list[float] = Field([3e-4, 1e-3, 3e-3, 1e-2, 3e-2], min_length=1)
    steps: int = Field(2000, ge=1)
    seeds: int = Field(1, ge=1)
    delay_frac: float = Field(0.1, gt=0, lt=1, description="grokking: test > this x steps later")
    rq_high: float = Field(0.5, gt=0, lt=1, description="representation quality counted as high")


class Phases(Claim):
    """Four phases on a weight-decay x learning-rate grid; structure where it generalizes (#107)."""

    id = "grokking.phases"
    papers = (
        Ref(
            107,
            "Liu, Kitouni, Nolte, Michaud, Tegmark & Williams 2022",
            "Towards understanding grokking: an effective theory of representation learning",
        ),
    )
    statement = (
        "On a weight-decay x learning-rate grid (embedding-MLP, modular addition, full batch), all "
        "four phases of Liu et al. appear (90% accuracy rules, grokking = test > budget/10 steps "
        "after train), and representation quality (top-3 Fourier share of the residue embeddings) "
        "is high (>= 0.5) in the median comprehension/grokking cell and low (< 0.5) in the median "
        "memorization/confusion cell. One of the two: inconclusive."
    )
    Config = PhasesConfig
    scope = "proxy"
    scope_note = (
        "Liu et al.'s toy sums 1-dimensional embeddings of non-modular addition (p = 10) into a "
        "tanh decoder regressed by MSE, scored by the parallelogram RQI; here concatenated "
        "16-dim embeddings of modular addition mod 23, a ReLU MLP with cross entropy, and the "
        "embeddings' top-3 Fourier share in place of the RQI."
    )
    budgets = {"smoke": {"xs": [0.0, 1.0, 3.0, 10.0], "ys": [3e-2], "steps": 1500}, "full": {}}
    LEVEL = 0.9  # Liu et al.'s
    measures = {
        "t_train": FirstStep(TRAIN, "accuracy", LEVEL),
        "t_test": FirstStep(TEST, "accuracy", LEVEL),
        "train": Extreme(TRAIN, "accuracy"),
        "rq": Final("model", "rep_quality"),
    }
    fit = Fit("train", LEVEL, any_arm=True)  # confusion cells do not fit, by definition
    floor = NotApplicable(
        "floor",
        "the phases partition the grid: a grid without generalizing "
        "cells lacks two of the four phases the claim says must appear",
    )
    controls = {
        "negative": Control(
            {"operation": "random"},
            "not reproduced",
            "a random table has no "
            "structure to learn: memorization and confusion only, never "
            "comprehension or grokking",
            slow=True,
        ),
        "positive": Control(
            {"train_fraction": 0.8},
            "reproduced",
            "the full 5 x 5 grid on 80% "
            "of the table, where Liu et al.'s comprehension phase exists (more data "
            "moves cells from grokking to comprehension): measured comprehension 3, "
            "grokking 6, memorization 11, confusion 5, representation quality 0.67 "
            "vs 0.48. At the default 60% no cell comprehends (inconclusive); at 90% "
            "the confusion cells' tiny, gradient-shaped embeddings have a Fourier "
            "share of 0.99 and lift the non-generalizing median to 0.51 "
            "(inconclusive)",
            budget="full",
            heavy=True,
        ),
    }

    def arms(self, cfg: PhasesConfig):
        base = mlp_base(cfg, cfg.train_fraction, ("accuracy", "rep_quality"))
        base["stop"] = [{"split": TEST, "metric": "accuracy", "threshold": self.LEVEL}]
        return phase_design(base, cfg.x, cfg.xs, cfg.y, cfg.ys, cfg.seeds).expand()

    def synthetic(self, cfg: PhasesConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: along x, comprehension, grokking, memorization, confusion (a quarter of the
        columns each), representation quality high only where it generalizes; null: every cell
        memorizes, quality 0.2; unfit: every cell stays at train 0.5 (no arm fits)."""
        xs = sorted(cfg.xs)
        phase = "memorization" if case == "null" else PHASES[xs.index(arm[cfg.x]) * 4 // len(xs)]
        t_train, t_test = {
            "comprehension": (100.0, 150.0),
            "grokking": (100.0, 1000.0),
            "memorization": (100.0, math.nan),
        }.get(phase, (math.nan, math.nan))
        if case == "unfit":
            t_train, t_test = math.nan, math.nan
        return {
            "t_train": t_train,
            "t_test": t_test,
            "train": 0.5 if math.isnan(t_train) else 1.0,
            "rq": 0.8 if phase in ("comprehension", "grokking") else 0.2,
        }

    def phases(self, cfg: PhasesConfig, table: pd.DataFrame) -> pd.Series:
        delay = cfg.delay_frac * cfg.steps
        return pd.Series(
            [classify(a, b, delay) for a, b in zip(table["t_train"], table["t_test"], strict=True)],
            index=table.index,
        )

    def decide(self, cfg: PhasesConfig, table: pd.DataFrame) -> Decision:
        phase = self.phases(cfg, table)
        counts = phase.value_counts().reindex(PHASES, fill_value=0)
        gen = phase.isin(["comprehension", "grokking"])
        rq_gen, rq_not = table.loc[gen, "rq"].median(), table.loc[~gen, "rq"].median()
        four = bool((counts > 0).all())
        rq_ok = bool(rq_gen >= cfg.rq_high and rq_not < cfg.rq_high)
        verdict = (
            "reproduced"
            if four and rq_ok
            else "inconclusive"
            if four or rq_ok
            else "not reproduced"
        )
        rq_by = table.groupby(phase)["rq"].median()
        stats = {f"cells_{k}": v for k, v in counts.items()} | {
            "median_rq_generalizing": rq_gen,
            "median_rq_not_generalizing": rq_not,
            "all_four_phases": four,
            "rq_high_only_where_generalizing": rq_ok,
        }
        sentence = (
            f"Phases over {len(table)} runs: "
            + ", ".join(f"{k} {v}" for k, v in counts.items())
            + f"; median representation quality {rq_gen:.2f} where it generalizes vs "
            f"{rq_not:.2f} elsewhere (by phase: "
            + ", ".join(f"{k} {rq_by.get(k, float('nan')):.2f}" for k in PHASES)
            + f"); grid {cfg.x} x {cfg.y}, p={cfg.p}, {cfg.steps} steps."
        )
        return Decision(verdict, stats, sentence)

    def draw(self, cfg: PhasesConfig, result, metrics: pd.DataFrame, path):
        runs, keys = result.runs, self.keys(result.runs)
        if runs.empty:
            return None
        figure = PhaseGrid(value="rq")
        title = f"{self.id} \u2014 {result.verdict}"
        return figure.draw(runs.assign(phase=self.phases(cfg, runs)), metrics, path, title, keys)


register(Phases())
