"""``comp.random_toys`` (#64, "Grasping by playing with random toys", 2025; tier T3): zero-shot
generalization to real objects grows with the number and the diversity of the procedural toys
seen in training.

The paper trains a grasping policy (an object-centric "detection pooling" visual representation)
on random assemblies of four shape primitives (spheres, cuboids, cylinders, rings) in simulation
and tests it zero-shot on YCB objects, in simulation and on a real robot (67% real-world grasp
success); it reports that zero-shot performance scales with the number and diversity of the
training toys and with the demonstrations per toy.

genlab's proxy on ``random_toys`` (``tasks/random_toys.py``): 2D silhouettes of 2-4 primitives
(disk, rectangle, capsule, annulus) in random poses; the label is the bin (of four, 45 degrees
each) of the silhouette's principal axis, the angle a parallel-jaw gripper closes across. A small
CNN (conv blocks of 8 and 16 channels, Adam 1e-3, 300 steps of 64) trains on 2000 images in
three arms that share each seed's test set: ``few`` (8 toys of all four primitives, 250 poses each), ``many`` (256
toys, about 8 poses each) and ``one_type`` (256 toys of rectangles only). The zero-shot test set
is scikit-learn digits (upsampled, rotated, binarised), objects not assembled from primitives.

Differences from the paper: a 4-way grasp-angle classification of 16x16 silhouettes instead of
6-DoF grasping from RGB-D in simulation and on a robot; digits instead of YCB objects; a plain
CNN instead of detection pooling (the paper's key component is not tested); "diversity" is the
number of primitive types (four against one) at a fixed number of toys; the total number of
training images is fixed, so more toys means fewer poses per toy (the paper also varies the
demonstrations per toy, not tested here). No official code was read.

Pilot (Dec 3 2026, before freezing; seed 0 only): it read the wall time of the ``many`` arm and
that arm's fit (``val/main``) only, never a test set nor another arm: channels [16, 32], 500
steps: val 0.80 in 66 s on the loaded machine; channels [8, 16], 300 steps: val 0.70 in 42 s (of
which 8 s build the data and evaluate). That set the CNN, the steps, three seeds and the fit level
(0.6), to keep the full budget (27 runs, controls included) near ten minutes.

Measured Dec 3 2026 at full: inconclusive (the judge decided "not reproduced", which the positive
control does not license). Over 6 seeds (the seed rule's second look; 400 s wall for the claim and
its 3-seed controls, 107 CPU s, then about 200 s for the 6-seed controls, at a load average near
10 on 2 cores), zero-shot accuracy on
digits: few 0.760, many 0.749, one_type 0.753; 256 - 8 toys -0.011 [-0.049, 0.027], four types -
rectangles -0.004 [-0.032, 0.024]. Every arm reads the grasp axis of a digit about equally well,
and the 256-toy arms fit their own training distribution worse (val 0.68-0.69 against 0.83 for
8 toys in 300 steps). Controls (re-frozen after this result at 6 seeds, since a control does not
follow the seed rule and 3 seeds could not license anything; the 3-seed positive control had come
out inconclusive, 0.029 [-0.064, 0.122]): negative (new poses of the training toys) not
reproduced, 256 - 8 toys -0.154 [-0.235, -0.073]; positive (new toys) not reproduced, 256 - 8
toys 0.017 [-0.011, 0.046], four types - rectangles -0.001 [-0.039, 0.037]. So at this budget
not even new toys from the generator show the effect: the target is a generic, local geometric
feature that any set of toys teaches, and the design cannot reach "reproduced". What would
decide it: a budget at which the 256-toy arms fit (val >= 0.8), or a target that depends on how
the primitives are assembled (the paper's grasps depend on the object's parts), so that the
positive control comes out reproduced first.
"""

from __future__ import annotations

from typing import Literal

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.guards import Fit, Floor, Interval, combine
from genlab.claims.measures import Final
from genlab.design import Design
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars

CNN = {"name": "cnn", "params": {"channels": [8, 16], "pool_every": 1}}
OPTIM = {"name": "adam", "lr": 1e-3, "weight_decay": 0.0, "betas": [0.9, 0.999]}


class ToysConfig(Params):
    """The three training sets (paired by seed: one test set) and the CNN's budget."""

    few: int = Field(8, ge=1, description="toys in the few arm")
    many: int = Field(256, ge=2, description="toys in the many and one_type arms")
    test_objects: Literal["digits", "toys", "train_toys"] = Field(
        "digits", description="the zero-shot test set (random_toys.test_objects)"
    )
    steps: int = Field(300, ge=1)
    seeds: int = Field(3, ge=2)


class RandomToys(Claim):
    """More, and more diverse, procedural toys generalize better zero-shot (#64)."""

    id = "comp.random_toys"
    papers = (Ref(64, "2025", "Grasping by playing with random toys"),)
    statement = (
        "On random_toys (2000 training silhouettes, label: the 4-way principal-axis bin), a small "
        "CNN's zero-shot accuracy on rotated digit silhouettes is higher (a) after 256 toys of four "
        "primitive types than after 8 such toys, by >= 0.05, and (b) after 256 toys of four types "
        "than after 256 toys of rectangles only, by >= 0.03 (paired 95% CIs over seeds above 0). "
        "Not reproduced when either CI lies wholly below its threshold."
    )
    Config = ToysConfig
    scope = "proxy"
    scope_note = (
        "6-DoF robot grasping trained on random primitive assemblies in simulation and tested on "
        "YCB objects replaced by 4-way grasp-angle classification of 16x16 silhouettes of 2D "
        "primitive assemblies, tested on rotated digit silhouettes; a plain CNN instead of "
        "detection pooling"
    )
    budgets = {"smoke": {"steps": 60, "seeds": 2}, "full": {}}
    smoke_decides = False  # 2 seeds and 60 steps only check that the code runs
    NUMBER, DIVERSITY = 0.05, 0.03  # fixed before running
    measures = {"objects": Final("test/objects"), "val": Final("val/main")}
    fit = Fit("val", 0.6)
    floor = Floor("objects", 0.3)  # chance is 0.25
    figure = ArmBars("objects", by="toys")
    controls = {
        "negative": Control(
            {"test_objects": "train_toys", "seeds": 6},
            "not reproduced",
            "tested on new "
            "poses of each arm's own training toys: no novel object, so by the "
            "paper's logic more or more diverse toys buy nothing (at a fixed "
            "total, fewer toys means more poses of each test object)",
            budget="full",
            heavy=True,
        ),
        "positive": Control(
            {"test_objects": "toys", "seeds": 6},
            "reproduced",
            "tested on new toys of all "
            "four primitives: novel objects from the generator itself, which more "
            "toys and all four primitive types cover better by the paper's "
            "logic",
            budget="full",
            heavy=True,
            open="Measured Dec 3 2026 (full, 6 seeds): not reproduced, 256 - 8 "
            "toys 0.017 [-0.011, 0.046], four types - rectangles -0.001 [-0.039, "
            "0.037]: on this target every set of toys teaches the grasp axis of "
            "new toys about equally; the design needs a target that depends on "
            "how primitives are assembled, or a budget at which 256 toys fit",
        ),
    }

    def arms(self, cfg: ToysConfig):
        base = {
            "task": {"name": "random_toys", "params": {"test_objects": cfg.test_objects}},
            "model": CNN,
            "method": {"name": "erm"},
            "optimizer": OPTIM,
            "steps": cfg.steps,
            "batch_size": 64,
            "checkpoint_every": cfg.steps,
            "eval": {"every": cfg.steps, "log_points": 0, "probes": [{"name": "accuracy"}]},
        }
        toys = {
            "few": {"task.params.n_toys": cfg.few},
            "many": {"task.params.n_toys": cfg.many},
            "one_type": {"task.params.n_toys": cfg.many, "task.params.primitives": ["cuboid"]},
        }
        return Design(base, axes={"toys": toys}, seeds=cfg.seeds).expand()

    def synthetic(self, cfg: ToysConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: zero-shot 0.45 (few), 0.48 (one_type), 0.55 (many); null: all 0.50; unfit: the
        many arm's val at 0.5."""
        acc = {"few": 0.45, "many": 0.55, "one_type": 0.48}[arm["toys"]]
        val = 0.5 if case == "unfit" and arm["toys"] == "many" else 0.9
        return {"objects": 0.50 if case == "null" else acc, "val": val}

    def decide(self, cfg: ToysConfig, table: pd.DataFrame) -> Decision:
        wide = table.pivot_table(index="seed", columns="toys", values="objects")
        ivs = [
            Interval.of(
                f"{cfg.many} - {cfg.few} toys",
                (wide["many"] - wide["few"]).dropna(),
                null=0.0,
                smallest=self.NUMBER,
            ),
            Interval.of(
                "four primitive types - rectangles only",
                (wide["many"] - wide["one_type"]).dropna(),
                null=0.0,
                smallest=self.DIVERSITY,
            ),
        ]
        val = table.groupby("toys")["val"].mean()
        stats = {f"{k}_objects": wide[k].mean() for k in wide.columns} | {
            f"{k}_val": v for k, v in val.items()
        }
        sentence = (
            f"Zero-shot accuracy on {cfg.test_objects} over {len(wide)} seeds: "
            + ", ".join(f"{k} {wide[k].mean():.3f} (val {val[k]:.3f})" for k in wide.columns)
            + "; "
            + "; ".join(iv.text() for iv in ivs)
            + "."
        )
        return Decision(combine([iv.verdict() for iv in ivs]), stats, sentence, ivs)


register(RandomToys())
