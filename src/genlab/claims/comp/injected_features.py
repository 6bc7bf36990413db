"""``comp.injected_features`` (G-SSNN, #119): the choice of discrete features injected next to a
neural module's input predictably heightens or curtails its generalization from little data.

``injected_features``: random binary 6x6 grids (density 0.4) labelled by whether they hold a filled
2x2 block; an MLP reads the raw grid plus the features a program computes from it: none; a helpful
program of partial use (``partial``: the filled 2x2 blocks lying wholly inside each quadrant,
counted per quadrant: a block across a quadrant border is missed, so the counts find one in 74% of
the positive grids, and ``sum > 0`` alone is right on 90% of the grids against the majority
class's 60%); or a misleading program (``parity``: the parity of the top-left quadrant's filled
cells, times 4). The training grids of every arm are drawn with a confound (``cue_agree`` 0.75):
on three in four of them that parity equals the label, on val/test grids as drawn (agreement 0.50):
the misleading program is partly useful in training and useless at test, and it is a program of
the grid, present in the raw input of every arm too, not a copy of the label. Each arm trains on
the same grids per seed (paired).

Redesigned on Dec 3 2026 (issue #31, after the earlier results had been seen): the "helpful"
program counted every filled 2x2 block per quadrant, so ``sum > 0`` was the label itself, and the
"misleading" feature was a bit that copied the label on 90% of the training grids (a coin flip at
test), so both effects held by construction. Now neither feature is the label and both are programs
of the input, of partial use, as in the paper, where each synthesised program's graph restructures
the representation and its use for the task is found by training, not given.

The paper's code (``shlomenu/symbolically_synthesized_networks``, read for this redesign): RAVEN
panels (``raven-gen``) labelled by whether a rule keeps the colour constant, 128 training panels
and 1,200 evaluation panels from one random split (no confound), a ViT encoder whose embedding a
synthesised graph (DreamCoder-style program search with ``stitch`` library learning) cuts into node
and edge features for a GIN network, a population of programs evolved by training accuracy,
compared with the ViT baseline over training iterations. Differences: hand-written programs, not
synthesised ones; an MLP on the raw grid with the program's outputs concatenated, not a graph
network whose structure the program sets; a 6x6 grid task of genlab's own, not RAVEN; a training
sample confound (not in the paper) is how a program of the input can mislead an MLP that also
reads the raw input; 100 and 800 training grids, 8 seeds (the paper: 128 panels, a population).

Controls (Dec 3 2026, issue #31): ``negative``: per-quadrant filled-cell counts (``irrelevant``, a
linear summary the raw grid already gives) in the helpful program's place, so the helpful part must
fail; ``negative_unconfounded``: the training grids drawn as they come, so the parity program is
as useless in training as at test and must not curtail; ``positive``: the confound at 0.9 instead
of 0.75, a stronger dose of the misleading program's training use. Before (issue #30): the
positive control was the misleading bit at 98% agreement, the negative the irrelevant counts.
"""

from __future__ import annotations

from typing import Literal

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.comp._common import TrainConfig, paired, spec
from genlab.claims.guards import Fit, Interval, NotApplicable, combine
from genlab.claims.measures import Final
from genlab.design import Design
from genlab.report.claim_figures import ArmBars


class InjectedConfig(TrainConfig):
    helpful: Literal["partial", "irrelevant"] = Field(
        "partial", description="the features expected to help"
    )
    cue_agree: float | None = Field(
        0.75,
        ge=0.5,
        le=1,
        description="training grids on which the top-left parity equals the label (None: as drawn)",
    )
    sizes: tuple[int, ...] = Field((100, 800), min_length=1, description="training grids")
    min_effect: float = Field(0.05, gt=0)


class InjectedFeatures(Claim):
    """Helpful injected features raise test accuracy, misleading ones lower it (#119)."""

    id = "comp.injected_features"
    papers = (
        Ref(
            119,
            "G-SSNN author (single author, 2023-24; unidentified in the catalogue)",
            "Graph-based symbolically synthesized neural networks",
        ),
    )
    statement = (
        "At every training size (100 and 800 grids), injecting a partly useful program's features "
        "(2x2 blocks counted within each quadrant) raises test accuracy over the raw grid by >= "
        "0.05, and injecting a program that agrees with the label on 75% of the training grids "
        "only (the top-left parity, through a confound of the training sample) lowers it by >= "
        "0.05 (paired-seed 95% CIs beyond 0), every arm fitting its training set."
    )
    Config = InjectedConfig
    scope = "reconstruction"
    scope_note = (
        "the paper's synthesised programs, graph modules and RAVEN panels are not reproduced: "
        "genlab reads them as two hand-written programs of partial use (2x2 blocks within each "
        "quadrant; a top-left parity confounded with the label in training) injected beside the "
        "raw input of an MLP, on a 6x6 grid task of its own"
    )
    budgets = {
        "smoke": {"steps": 200, "batch_size": 100, "seeds": 3},
        "full": {"steps": 1000, "batch_size": 100, "seeds": 8},
    }
    measures = {"train": Final("train/main"), "test": Final("test/main")}
    fit = Fit("train", 0.95)
    floor = NotApplicable(
        "floor",
        "a binary task whose raw-grid arm sits well above chance; "
        "an arm at chance is a result of its features here",
    )
    figure = ArmBars("test", by=("features", "n_train"), lines=(("chance", 0.5),))
    controls = {
        "negative": Control(
            {"helpful": "irrelevant"},
            "not reproduced",
            "per-quadrant counts of "
            "filled cells in the helpful arm's place: a linear summary of the raw "
            "grid, which says little about 2x2 blocks, cannot raise accuracy",
            slow=True,
        ),
        "negative_unconfounded": Control(
            {"cue_agree": None},
            "not reproduced",
            "the training "
            "grids drawn as they come: the parity program is as "
            "useless in training as at test, so by the paper's "
            "account (a program misleads through the use training "
            "finds for it) it cannot curtail accuracy",
            slow=True,
        ),
        "positive": Control(
            {"cue_agree": 0.9},
            "reproduced",
            "the parity agrees with the label "
            "on 90% of the training grids instead of 75%: a stronger dose of the "
            "misleading program's training use, which by the paper's account "
            "curtails test accuracy more, beside the same helpful program",
            slow=True,
        ),
    }

    def arms(self, cfg: InjectedConfig):
        task = {"n_val": 0, "n_test": 4000, "cue_agree": cfg.cue_agree}
        base = spec(cfg, "injected_features", task, "mlp", {})
        feats = {f: {"task.features": f} for f in ("none", cfg.helpful, "parity")}
        return Design(
            base,
            axes={"features": feats, "n_train": {n: {"task.n_train": n} for n in cfg.sizes}},
            seeds=cfg.seeds,
        ).expand()

    def synthetic(self, cfg: InjectedConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: test 0.7 raw, +0.2 with the helpful features, -0.15 with the parity program;
        null: 0.7 everywhere; unfit: as effect, the parity arm at train 0.8."""
        shift = {cfg.helpful: 0.2, "parity": -0.15}.get(arm["features"], 0.0)
        unfit = case == "unfit" and arm["features"] == "parity"
        return {"train": 0.8 if unfit else 1.0, "test": 0.7 + shift * (case != "null")}

    def decide(self, cfg: InjectedConfig, table: pd.DataFrame) -> Decision:
        ivs, stats = [], {}
        for n in cfg.sizes:
            up = paired(
                table,
                "test",
                {"features": cfg.helpful, "n_train": n},
                {"features": "none", "n_train": n},
            )
            down = paired(
                table,
                "test",
                {"features": "parity", "n_train": n},
                {"features": "none", "n_train": n},
            )
            ivs += [
                Interval.of(f"{cfg.helpful} - none at {n}", up, smallest=cfg.min_effect),
                Interval.of(f"parity - none at {n}", down, smallest=-cfg.min_effect, above=False),
            ]
            stats |= {
                f"{cfg.helpful}_gain_{n}": ivs[-2].estimate,
                f"parity_gain_{n}": ivs[-1].estimate,
            }
        means = table.groupby(["features", "n_train"])["test"].mean()
        raw = ", ".join(
            f"{f} {means.get((f, n), float('nan')):.3f}"
            for n in cfg.sizes
            for f in ("none", cfg.helpful, "parity")
        )
        cue = "as drawn" if cfg.cue_agree is None else f"{cfg.cue_agree:g}"
        stats |= {f"test_{f}_{n}": v for (f, n), v in means.items()}
        sentence = (
            f"Test accuracy (training parity-label agreement {cue}; {raw} at "
            f"{' / '.join(map(str, cfg.sizes))} grids), paired over seeds: "
            + "; ".join(iv.text() for iv in ivs)
            + "."
        )
        return Decision(combine([iv.verdict() for iv in ivs]), stats, sentence, ivs)


register(InjectedFeatures())
