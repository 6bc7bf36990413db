"""``length.abstract_symbols`` (Boix-Adsera et al. 2024, #96): two trainable parameters per head
(``a_h I`` added to ``W_Q W_K^T``, ``b_h I`` to ``W_V W_O``) reduce the data a transformer needs
to solve a same/different template task on symbols never seen in training.

The vanilla ``transformer`` and ``transformer_symbolic`` train on ``seq_templates`` at every
size of a grid; the data needed is the smallest size whose mean accuracy on unseen symbols
reaches 0.9.

The paper's code is github.com/eboix/relational-reasoning (``experiments/models.py``: the
template-matching transformer with ``trainable_wkwq_identity`` / ``trainable_wvwo_identity``;
``experiments/dataset_utils.py``: the template data). The two terms are the paper's (a per-head
scalar times ``x x^T`` added to the attention scores, and times ``A_h x`` added to the attention
output, ``x`` the block's normalised input), so this is not a reconstruction. Both arms use the
paper's network (``transformer_symbolic`` with ``causal=False, readout="cls"``, the vanilla arm
without the terms): attention both ways and a learned CLS token appended after the symbols,
which the classifier reads (the input holds only the symbols, never the label). The terms are
parametrised as the paper's code does: ``a_h, b_h`` start at 0 and multiply ``x x^T`` and
``A_h x`` by a fixed factor (``wkwq_id_mult``, ``wvwo_id_mult``: 1.0, the defaults in its code;
the notebook that sets them per figure is not in the stored copy), with no ``1/sqrt(d_head)``.
Differences:

- the network's details: genlab's pre-norm blocks (biases in the projections, learned positions
  at 0.02, d=64, 2 layers, 4 heads of 16; the paper's ViT-style encoder has bias-free projections
  and heads 64 wide);
- the data: 100 training and 100 unseen symbols (the paper's alphabets run to thousands), a fixed
  training set per size (as the paper's), 800 steps of 64, AdamW at 1e-3;
- the aggregation: the paper draws unseen-symbol accuracy against the number of training samples;
  the "data needed" (first size of a 4-point grid whose seed mean reaches 0.9, over 3 seeds) is
  ours. The metric (accuracy on unseen symbols) is the paper's.

Measured history (genlab's earlier causal form, which differences decide the verdict, the power
rule, the controls): docs/length_generalization.md (length.abstract_symbols).

Issue #30 (Dec 3 2026): the judge is unchanged (every decision reads every arm; the fit and floor
guards judge the whole grid). The negative control now runs 3 seeds: at the smoke budget's one
seed no interval exists, so it could not have come out "reproduced" (the audit's ``sensitive``).
The smoke budget (1 seed) only checks that the code runs.
"""

from __future__ import annotations

import math
from typing import Literal

import pandas as pd
from pydantic import Field, model_validator

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.guards import Fit, Floor, Interval
from genlab.claims.measures import Final
from genlab.design import Design
from genlab.models.positional import PositionalName
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars


class SymbolsConfig(Params):
    """Data grid, models and budget of ``length.abstract_symbols``."""

    sizes: list[int] = Field(
        default_factory=lambda: [64, 256, 1024, 4096], description="training-set sizes, rising"
    )
    templates: list[str] = Field(default_factory=lambda: ["aa", "ab"], description="same/diff")
    n_symbols_train: int = Field(100, ge=2)
    n_symbols_test: int = Field(100, ge=2)
    n_test: int = Field(1000, ge=1)
    d_model: int = Field(64, ge=4)
    n_layers: int = Field(2, ge=1)
    n_heads: int = Field(4, ge=1, description="heads (width d_model / n_heads; the paper's: 64)")
    positional: PositionalName = Field("learned")
    causal: bool = Field(False, description="True: both arms causal (the paper's: False)")
    readout: Literal["last", "cls"] = Field(
        "cls", description="both arms read an appended CLS token (the paper's), or the last symbol"
    )
    identity_scale: Literal["sqrt_dhead"] | float = Field(
        1.0, description="x x^T times this (the paper's wkwq_id_mult, 1.0), or over sqrt(d_head)"
    )
    modified_qk: bool = Field(True, description="the modified arm adds a_h I to W_Q W_K^T")
    modified_vo: bool = Field(True, description="the modified arm adds b_h I to W_V W_O")
    identity_init: float = Field(0.0, description="initial a_h, b_h (the paper's: 0)")
    steps: int = Field(800, ge=1)
    lr: float = Field(1e-3, gt=0)
    batch_size: int = Field(64, ge=1)
    seeds: int = Field(3, ge=1)

    @model_validator(mode="after")
    def _check(self) -> SymbolsConfig:
        if len(self.sizes) < 2 or sorted(set(self.sizes)) != self.sizes:
            raise ValueError(f"sizes must be >= 2 rising training-set sizes, got {self.sizes}")
        if not (self.modified_qk or self.modified_vo):
            raise ValueError("the modified arm needs modified_qk or modified_vo")
        return self


class AbstractSymbols(Claim):
    """Two identity parameters per head cut the data needed for same/different (#96)."""

    id = "length.abstract_symbols"
    papers = (
        Ref(
            96,
            "Boix-Adsera, Saremi, Abbe, Bengio, Littwin & Susskind 2024",
            "When can transformers reason with abstract symbols?",
        ),
    )
    statement = (
        "On the same/different template task scored on symbols never seen in training, every "
        "run fitting its training set (accuracy >= 0.99), the smallest training size at which "
        "mean unseen-symbol accuracy (over seeds) reaches 0.9 is at most half as large with the "
        "two identity parameters per head as without (a size the vanilla transformer never "
        "reaches on the grid counts as infinite). Not reproduced when the modified transformer "
        "never reaches 0.9 on the grid or needs at least as much data as the vanilla one; "
        "reproduced only when the gap holds beyond the seeds' noise (the modified arm's 95% CI at "
        "its size above 0.9, the vanilla arm's below 0.9 at the grid's sizes under twice that), "
        "otherwise inconclusive."
    )
    Config = SymbolsConfig
    scope = "paper"
    smoke_decides = False
    TARGET, FACTOR = 0.9, 2.0
    budgets = {
        "smoke": {
            "sizes": [256, 2048],
            "n_symbols_train": 20,
            "n_symbols_test": 20,
            "n_test": 200,
            "d_model": 32,
            "n_layers": 1,
            "steps": 400,
            "lr": 3e-3,
            "seeds": 1,
        },
        "full": {},
    }
    measures = {"train": Final("train/main"), "unseen": Final("test/unseen_symbols")}
    fit = Fit("train", 0.99)
    floor = Floor("unseen", 0.55)  # chance is 0.5 with two templates
    figure = ArmBars("unseen", by=("n_train", "arm"), lines=(("target", TARGET),))
    controls = {
        "negative": Control(
            {"modified_qk": False, "seeds": 3},
            "not reproduced",
            "Boix-Adsera et "
            "al.: the a_h I term in the query-key product is what lets attention "
            "compare symbols; b_h I alone adds nothing a same/different read-out "
            "needs (3 seeds: the intervals a 'reproduced' needs exist)",
            slow=True,
        ),
        "positive": Control(
            {"n_heads": 1},
            "reproduced",
            "one head 64 wide (the paper's head "
            "width) in the paper's network: measured at full, modified "
            "0.592/0.748/0.950/0.907 (1024: [0.906, 0.993]) against vanilla "
            "0.561/0.699/0.832/0.743 (1024: [0.771, 0.893]), needs 1024 vs never",
            budget="full",
            heavy=True,
        ),
    }

    def arms(self, cfg: SymbolsConfig):
        common = {
            "d_model": cfg.d_model,
            "n_heads": cfg.n_heads,
            "n_layers": cfg.n_layers,
            "positional": cfg.positional,
        }
        # the network for both arms (both ways and a CLS read-out: the paper's); the model leaves
        # these params out of run ids at its defaults (``quiet_defaults``), so the causal form,
        # whose vanilla arm is the plain ``transformer``, keeps its ids
        net = {"causal": cfg.causal, "readout": cfg.readout}
        modified = {
            "name": "transformer_symbolic",
            "params": {
                **common,
                **net,
                "identity_scale": cfg.identity_scale,
                "identity_qk": cfg.modified_qk,
                "identity_vo": cfg.modified_vo,
                "identity_init": cfg.identity_init,
            },
        }
        causal_form = cfg.causal and cfg.readout == "last"
        vanilla = (
            {"name": "transformer", "params": common}
            if causal_form
            else {
                "name": "transformer_symbolic",
                "params": {**common, **net, "identity_qk": False, "identity_vo": False},
            }
        )
        base = {
            "task": {
                "name": "seq_templates",
                "params": {
                    "templates": cfg.templates,
                    "n_symbols_train": cfg.n_symbols_train,
                    "n_symbols_test": cfg.n_symbols_test,
                    "n_val": 200,
                    "n_test": cfg.n_test,
                },
            },
            "model": vanilla,
            "steps": cfg.steps,
            "batch_size": cfg.batch_size,
            "optimizer": {"name": "adamw", "lr": cfg.lr, "grad_clip": 1.0},
            "eval": {"every": cfg.steps, "log_points": 0, "probes": [{"name": "accuracy"}]},
        }
        axes = {
            "n_train": {n: {"task.params.n_train": n} for n in cfg.sizes},
            "arm": {"vanilla": {}, "modified": {"model": modified}},
        }
        return Design(base, axes, seeds=cfg.seeds).expand()

    def synthetic(self, cfg: SymbolsConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: the modified arm at 0.95 on unseen symbols from the smallest size, the vanilla
        one at 0.6 everywhere; null: both at 0.6 below the largest size and 0.95 there; unfit: as
        effect, the modified arm at the smallest size not fitting."""
        mod, big = arm["arm"] == "modified", arm["n_train"] == cfg.sizes[-1]
        unseen = 0.95 if (mod and case != "null") or (big and case == "null") else 0.6
        fit = case != "unfit" or not mod or arm["n_train"] != cfg.sizes[0]
        return {"train": 1.0 if fit else 0.5, "unseen": unseen}

    def needed(self, curve: pd.Series) -> float:
        """The smallest size whose mean accuracy reaches ``TARGET``; ``inf`` if none does."""
        hit = [n for n, acc in curve.items() if acc >= self.TARGET]
        return float(min(hit)) if hit else math.inf

    def decide(self, cfg: SymbolsConfig, table: pd.DataFrame) -> Decision:
        curve = table.groupby(["arm", "n_train"])["unseen"].mean()
        van, mod = self.needed(curve["vanilla"]), self.needed(curve["modified"])
        ivs: list[Interval] = []
        if math.isinf(mod) or mod >= van:
            verdict = "not reproduced"
        elif mod * self.FACTOR <= van:
            # the base's power guard makes this inconclusive unless the gap holds beyond the seeds'
            # noise: the modified arm's CI above the target at its size, and the vanilla arm's
            # below it wherever it must not reach it yet
            def acc(arm: str, n: float) -> list[float]:
                rows = table[(table["arm"] == arm) & (table["n_train"] == n)]
                return rows["unseen"].dropna().tolist()

            t = self.TARGET
            ivs = [Interval.of(f"modified at {mod:g}", acc("modified", mod), null=t, smallest=t)]
            ivs += [
                Interval.of(f"vanilla at {n:g}", acc("vanilla", n), null=t, smallest=t, above=False)
                for n in cfg.sizes
                if mod <= n < mod * self.FACTOR
            ]
            verdict = "reproduced"
        else:
            verdict = "inconclusive"
        text = "; ".join(
            f"{arm} " + ", ".join(f"{n}: {a:.3f}" for n, a in curve[arm].items())
            for arm in ("vanilla", "modified")
        )
        sentence = (
            f"Unseen-symbol accuracy by training size ({text}); data needed for "
            f"{self.TARGET}: vanilla {van:g}, modified {mod:g}."
        )
        stats = {"n_needed_vanilla": van, "n_needed_modified": mod}
        return Decision(verdict, stats, sentence, ivs)


register(AbstractSymbols())
