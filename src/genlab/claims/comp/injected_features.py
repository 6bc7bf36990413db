"""``comp.injected_features`` (G-SSNN, #119): the choice of discrete features injected next to a
neural module's input predictably heightens or curtails its generalization from little data.

``injected_features``: binary 6x6 grids labelled by whether they hold a filled 2x2 block; an MLP
reads the raw grid plus injected features: none, a helpful program (filled 2x2 blocks counted per
quadrant), or a misleading one (a bit agreeing with the label on 90% of the training grids, a coin
flip at test). Differences: the paper synthesises its programs and builds graph modules; here the
programs are fixed by hand and the module is an MLP on the concatenated input.

Controls (Dec 3 2026, issue #30): the positive control was the claim itself at smoke; it is now a
stronger misleading bit (``spurious`` 0.98 instead of 0.9).
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
    helpful: Literal["helpful", "irrelevant"] = Field("helpful", description="the features "
                                                      "expected to help")  # fmt: skip
    spurious: float = Field(0.9, ge=0.5, le=1, description="training grids on which the "
                            "misleading bit equals the label")  # fmt: skip
    sizes: tuple[int, ...] = Field((100, 800), min_length=1, description="training grids")
    min_effect: float = Field(0.05, gt=0)


class InjectedFeatures(Claim):
    """Helpful injected features raise test accuracy, misleading ones lower it (#119)."""

    id = "comp.injected_features"
    papers = (Ref(119, "G-SSNN author (single author, 2023-24; unidentified in the catalogue)",
                  "Graph-based symbolically synthesized neural networks"),)  # fmt: skip
    statement = (
        "At every training size (100 and 800 grids), injecting the helpful program's features "
        "raises test accuracy over the raw grid by >= 0.05 and injecting the misleading feature "
        "lowers it by >= 0.05 (paired-seed 95% CIs beyond 0), every arm fitting its training set."
    )
    Config = InjectedConfig
    scope = "reconstruction"
    scope_note = (
        "the paper's synthesised programs and graph modules are not reproduced: genlab reads the "
        "abstract as hand-fixed helpful (2x2 blocks per quadrant) and misleading (a spurious "
        "bit) features injected beside the raw input of an MLP, on a 6x6 grid task of its own"
    )
    budgets = {"smoke": {"steps": 200, "batch_size": 100, "seeds": 3},
               "full": {"steps": 1000, "batch_size": 100, "seeds": 8}}  # fmt: skip
    measures = {"train": Final("train/main"), "test": Final("test/main")}
    fit = Fit("train", 0.95)
    floor = NotApplicable("floor", "a binary task whose raw-grid arm sits well above chance; "
                          "an arm at chance is a result of its features here")  # fmt: skip
    figure = ArmBars("test", by=("features", "n_train"), lines=(("chance", 0.5),))
    controls = {
        "negative": Control({"helpful": "irrelevant"}, "not reproduced", "per-quadrant counts of "
                            "filled cells in the helpful arm's place: a program that says little "
                            "about 2x2 blocks does not raise accuracy", slow=True),
        "positive": Control({"spurious": 0.98}, "reproduced", "the misleading bit agrees "
                            "with the label on 98% of the training grids instead of 90%: a "
                            "stronger shortcut, which by the paper's account curtails test "
                            "accuracy more, beside the same helpful program", slow=True),
    }  # fmt: skip

    def arms(self, cfg: InjectedConfig):
        task = {"n_val": 0, "n_test": 4000, "spurious": cfg.spurious}
        base = spec(cfg, "injected_features", task, "mlp", {})
        feats = {f: {"task.features": f} for f in ("none", cfg.helpful, "misleading")}
        return Design(base, axes={"features": feats, "n_train": {n: {"task.n_train": n}
                      for n in cfg.sizes}}, seeds=cfg.seeds).expand()  # fmt: skip

    def synthetic(self, cfg: InjectedConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: test 0.7 raw, +0.2 with the helpful features, -0.15 with the misleading bit;
        null: 0.7 everywhere; unfit: as effect, the misleading arm at train 0.8."""
        shift = {cfg.helpful: 0.2, "misleading": -0.15}.get(arm["features"], 0.0)
        unfit = case == "unfit" and arm["features"] == "misleading"
        return {"train": 0.8 if unfit else 1.0, "test": 0.7 + shift * (case != "null")}

    def decide(self, cfg: InjectedConfig, table: pd.DataFrame) -> Decision:
        ivs, stats = [], {}
        for n in cfg.sizes:
            up = paired(table, "test", {"features": cfg.helpful, "n_train": n},
                        {"features": "none", "n_train": n})  # fmt: skip
            down = paired(table, "test", {"features": "misleading", "n_train": n},
                          {"features": "none", "n_train": n})  # fmt: skip
            ivs += [Interval.of(f"{cfg.helpful} - none at {n}", up, smallest=cfg.min_effect),
                    Interval.of(f"misleading - none at {n}", down, smallest=-cfg.min_effect,
                                above=False)]  # fmt: skip
            stats |= {f"{cfg.helpful}_gain_{n}": ivs[-2].estimate,
                      f"misleading_gain_{n}": ivs[-1].estimate}  # fmt: skip
        sentence = "Test accuracy, paired over seeds: " + "; ".join(iv.text() for iv in ivs) + "."
        return Decision(combine([iv.verdict() for iv in ivs]), stats, sentence, ivs)


register(InjectedFeatures())
