"""``length.scratchpad``: Anil et al., "Exploring length generalization in large language models"
(NeurIPS 2022, catalogue #46), the from-scratch half.

Transformers trained to answer parity directly do not extrapolate to longer bit strings; writing
the solution steps first (a scratchpad of running parities) is what the paper credits for length
generalization. The paper's dramatic gain comes from in-context learning in pretrained LLMs, which
is out of reach here; what is testable is whether the scratchpad helps a small decoder-only
transformer trained from scratch. Task ``seq_parity`` (direct vs scratchpad), the same model,
data and budget for both formats.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import Field

from genlab.analysis.stats import mean_ci
from genlab.claims import register
from genlab.claims.base import Claim, ClaimResult, Verdict
from genlab.claims.length._legacy import (
    PE,
    ExtrapolationBudget,
    arm_figure,
    final_metrics,
    fit_check,
    ood_table,
    run_spec_dict,
)
from genlab.spec import RunSpec, parse_spec

Format = Literal["direct", "scratchpad"]
# Exact match by guessing: one binary answer when direct; a whole chain of steps (~0) otherwise.
CHANCE = {"direct": 0.5, "scratchpad": 0.0}


class ScratchpadConfig(ExtrapolationBudget):
    """Model and budget of ``length.scratchpad``; both formats always run."""

    positional: PE = Field("none", description="positional encoding of the transformer")
    seeds: int = Field(3, ge=1)


class Scratchpad(Claim):
    """A scratchpad of running parities lets parity extrapolate where direct answers fail (#46)."""

    id = "length.scratchpad"
    family = "length"
    papers = (46,)
    statement = (
        "A decoder-only transformer trained on parity of <= L bits, scored by exact match of the "
        "whole target averaged over lengths up to 2L (mean over seeds) and measured above chance "
        "as max(0, (acc - chance) / (1 - chance)), chance 0.5 for the direct answer and 0 for a "
        "scratchpad chain: the direct format stays <= 0.2 and the scratchpad format is >= 0.2 "
        "higher. Not reproduced when the scratchpad gains <= 0.05 or the direct format already "
        "reaches >= 0.5; inconclusive otherwise, and whenever a format's mean in-distribution (val) "
        "exact match is below 0.9: a format that has not learned the training lengths says "
        "nothing about extrapolation."
    )
    Config = ScratchpadConfig
    DIRECT_FAILS, GAIN, NO_GAIN, DIRECT_OK, FIT = 0.2, 0.2, 0.05, 0.5, 0.9
    FORMATS: tuple[Format, ...] = ("direct", "scratchpad")
    budgets = {
        "smoke": {"train_length": 4, "test_max": 8, "n_test_lengths": 2, "n_train": 300,
                  "n_test": 30, "d_model": 32, "steps": 100, "seeds": 1},
        "full": {"n_layers": 3, "lr": 2e-3, "steps": 3000},  # what fits the scratchpad (val 0.91)
    }  # fmt: skip

    def specs(self, cfg: ScratchpadConfig) -> list[RunSpec]:
        model = {"name": "transformer", "params": {"d_model": cfg.d_model, "n_heads": 4,
                 "n_layers": cfg.n_layers, "positional": cfg.positional}}  # fmt: skip
        out = []
        for fmt in self.FORMATS:
            task = {"name": "seq_parity", "params": {
                "format": fmt, "train_length": cfg.train_length, "test_max": cfg.test_max,
                "n_test_lengths": cfg.n_test_lengths, "n_train": cfg.n_train, "n_val": 200,
                "n_test": cfg.n_test}}  # fmt: skip
            for seed in range(cfg.seeds):
                spec = run_spec_dict(task, model, cfg.steps, cfg.lr, cfg.batch_size, seed)
                out.append(parse_spec(spec))
        return out

    def judge(
        self, cfg: ScratchpadConfig, runs: pd.DataFrame, metrics: pd.DataFrame
    ) -> ClaimResult:
        final = final_metrics(runs, metrics)
        table = ood_table(final, ("format",))
        fit, unfit, fit_text = fit_check(final, table, "format", self.FORMATS, self.FIT)
        table["above_chance"] = [  # floored at 0: an untrained model misses even EOS
            max(0.0, (a - CHANCE[f]) / (1 - CHANCE[f]))
            for a, f in zip(table["accuracy"], table["format"], strict=True)
        ]
        score = {f: mean_ci(table.loc[table["format"] == f, "above_chance"].tolist())
                 for f in self.FORMATS}  # fmt: skip
        direct, pad = score["direct"]["mean"], score["scratchpad"]["mean"]
        gain = pad - direct
        verdict: Verdict = (
            "inconclusive" if gain != gain or unfit
            else "reproduced" if direct <= self.DIRECT_FAILS and gain >= self.GAIN
            else "not reproduced" if gain <= self.NO_GAIN or direct >= self.DIRECT_OK
            else "inconclusive"
        )  # fmt: skip
        stat = {f"above_chance_{f}": s["mean"] for f, s in score.items()}
        stat |= {f"above_chance_{f}_std": s["std"] for f, s in score.items()}
        stat["gain"] = gain
        stat |= {f"val_accuracy_{f}": float(v) for f, v in fit.items()}
        text = ", ".join(f"{f} {s['mean']:+.3f} ± {s['std']:.3f}" for f, s in score.items())
        evidence = (
            f"Out-of-range exact match above chance, mean ± std over {cfg.seeds} seed(s) (train "
            f"<= {cfg.train_length} bits, test to {cfg.test_max}, positional {cfg.positional}): "
            f"{text}; scratchpad gain {gain:+.3f}. Needs direct <= {self.DIRECT_FAILS} and gain "
            f">= {self.GAIN}. {fit_text}"
        )
        return ClaimResult(self.id, verdict, stat, evidence, table.reset_index())

    def figure(self, cfg: ScratchpadConfig, metrics: pd.DataFrame, path: Path) -> Path | None:
        return arm_figure(self.specs(cfg), metrics, path, f"{self.id}: exact match by number "
                          "of bits", cfg.train_length, lambda t: t["format"], "parity")  # fmt: skip


register(Scratchpad())
