"""``regime.updates_not_batch`` (Hoffer, Hubara & Soudry, NeurIPS 2017, #9): the large-batch
generalization gap comes from too few updates, not from the batch size.

A small CNN with BatchNorm trains on scikit-learn digits with SGD (momentum 0.9) in four arms,
paired by seed: ``small`` (batch ``small_batch``, ``epochs`` epochs), ``large`` (batch
``large_batch``, the same epochs, so ``large_batch / small_batch`` times fewer updates, learning
rate scaled by ``sqrt(large_batch / small_batch)``), ``large_gbn`` (``large`` with Ghost BN over
sub-batches of ``ghost_batch``) and ``large_updates`` (``large`` trained for as many updates as
``small``: the paper's regime adaptation). The ``weight_distance`` probe of the ``small`` run,
logged at log-spaced steps, tests the paper's "ultra-slow diffusion": ``||w_t - w_0||`` is fitted
better by ``a + b log t`` than by ``a + b sqrt t`` (a plain random walk).

Protocol differences from the paper (and its code, ``eladhoffer/bigBatch``): digits (1,000 train
images 8x8) and a two-block CNN instead of MNIST/CIFAR/ImageNet with ResNets; batch 32 vs 512
(ratio 16) instead of 128 vs 4096 (ratio 32); ghost batch 32 (the small batch) where the code's
default ``--mini-batch-size`` is 128 (used with batches 2048 and 4096); the sqrt scaling is
relative to the small batch, as in the paper (the code scales relative to its mini-batch size
128); constant learning rate, no decay schedule (the code keeps its model's step schedule and
stretches it for equal updates), no weight decay (the code's default 1e-4), gradient clipping at
5 as in the code's GBN script, no augmentation; the final test accuracy, not the best over
epochs; the weight distance over all parameters (the code logs the first layer's).
Matched fit (issue #31, Dec 2026). Until then the claim ran 20 epochs, where the large batch (40
updates) barely fits its training set (train accuracy mean 0.981, lowest seed 0.930), so part of
its gap could be underfitting; and 20 epochs was where the gap appeared (a 3-seed run at 30 epochs
had given 0.008 [-0.004, 0.020], below the 0.01 threshold — a forking path, seen before this
redesign). The gap is now read at matched fit: every run of ``small``, ``large`` and ``large_gbn``
must classify its whole training set (train accuracy >= 0.99 per run, not on average), else the
verdict is inconclusive; ``large_updates`` fits by far. The epochs were chosen by a pilot that read
only fit, by a rule fixed before it ran: grid 20, 30, 40, 60 epochs, 3 seeds (0-2), arms small,
large and large_gbn; the smallest epochs at which every pilot run of large and large_gbn reaches
train accuracy >= 0.995. Measured (train accuracy; train loss): 20 epochs, large 1.000 / 0.994 /
0.977 (loss 0.015-0.066), large_gbn 0.999-1.000; 30 epochs, every run 1.000 (large loss
0.005-0.007, large_gbn 0.004-0.005, small 0.0007). So 30 epochs (large batch: 59 updates; small:
938). No test accuracy was read in the pilot; thresholds, arms and seeds are the old design's.
At 30 epochs the training *loss* still differs (the small batch's is ~10x lower): matched fit here
means both interpolate the training set, as in the paper's account of a gap at equal training
error. Measured history of the old design: docs/training_regime.md (regime.updates_not_batch).

The claim cannot record "not reproduced": it has no positive control. Its judge reaches both
decisions (the audit's synthetic tables: no gap at equal epochs, or equal updates that do not
recover it, give "not reproduced"), but no configuration other than the claim's own is known to
show the gap at matched fit within the 2-core budget (a larger batch ratio needs a smaller small
batch and a ``large_updates`` arm of proportionally more updates of 512 images, several times the
claim's cost), so a "not reproduced" decision is recorded inconclusive, the judge's decision
beside it.

Negative control, Dec 3 2026 (issue #30): it was ``large_arm_updates = "equal_updates"`` at the
claim's batch 512, which made the "large" arm the claim's own ``large_updates`` runs (measured not
reproduced, gap 0.001 [-0.002, 0.003], by re-judging them). It now trains its own runs: the large
batch is 256 and the "large" arm gets as many updates as the small batch (625), so the arm
compared with the small batch is a new run at another batch size; by the paper's account the gap
is the missing updates, so with none missing there is none.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from genlab.claims import register
from genlab.claims.arms import arms, by_seed
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.guards import Fit, Floor, Interval, combine
from genlab.claims.measures import Derived, Final, series
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars

ARMS = ("small", "large", "large_gbn", "large_updates")


def log_vs_sqrt(m: pd.DataFrame) -> float:
    """R^2 of ``||w_t - w_0||`` against ``log t`` minus R^2 against ``sqrt t`` (steps >= 1): > 0
    when the distance grows like a logarithm rather than like a random walk."""
    d = series(m, "model", "weight_distance")
    d = d[d.index >= 1]
    if len(d) < 4:
        return math.nan
    t, y = d.index.to_numpy(dtype=float), d.to_numpy(dtype=float)

    def r2(x: np.ndarray) -> float:
        resid = y - np.polyval(np.polyfit(x, y, 1), x)
        tot = float(((y - y.mean()) ** 2).sum())
        return 1.0 - float((resid**2).sum()) / tot if tot > 0 else math.nan

    return r2(np.log(t)) - r2(np.sqrt(t))


class UpdatesConfig(Params):
    """Batch sizes, epochs, learning rate, Ghost BN and seeds."""

    small_batch: int = Field(32, ge=2)
    large_batch: int = Field(512, ge=2)
    large_arm_updates: str = Field(
        "equal_epochs",
        pattern="^(equal_epochs|equal_updates)$",
        description="updates of the 'large' arm (negative control: equal_updates)",
    )
    ghost_batch: int = Field(32, ge=2)
    epochs: int = Field(
        30,
        ge=1,
        description="epochs of the equal-epoch arms (a fit-only "
        "pilot: the large batch classifies its whole training set)",
    )
    train_size: int = Field(1000, ge=100, le=1500)
    lr: float = Field(0.05, gt=0, description="SGD learning rate at small_batch")
    channels: list[int] = Field(default_factory=lambda: [16, 32], min_length=1)
    log_points: int = Field(12, ge=4)
    seeds: int = Field(5, ge=3)

    @model_validator(mode="after")
    def _ratio(self) -> UpdatesConfig:
        if self.large_batch < self.small_batch:
            raise ValueError("large_batch must be >= small_batch")
        return self


class UpdatesNotBatch(Claim):
    """Large batch at equal epochs generalizes worse; equal updates close the gap; GBN shrinks
    it; weight distance from init grows like log t (Hoffer et al., #9)."""

    id = "regime.updates_not_batch"
    papers = (
        Ref(
            9,
            "Hoffer, Hubara & Soudry 2017",
            "Train longer, generalize better: closing "
            "the generalization gap in large batch training of neural networks",
        ),
    )
    statement = (
        "Paired over >= 3 seeds (digits, small BN CNN, SGD, 30 epochs), at matched fit (every "
        "run of the small batch, the large batch and Ghost BN classifies its whole training set: "
        "train accuracy >= 0.99 each, else inconclusive): (a) the large batch at equal epochs "
        "(sqrt LR scaling) has a lower test accuracy than the small batch: gap CI above 0, mean "
        ">= 0.01; (b) the large batch trained for as many updates as the small batch recovers "
        "more than half of that gap: CI of (large_updates - large) - gap/2 above 0; (c) Ghost BN "
        "shrinks the gap without more updates: CI of large_gbn - large above 0; (d) in the "
        "small-batch run, ||w_t - w_0|| is fitted better by log t than by sqrt t: CI of R^2(log) "
        "- R^2(sqrt) above 0. Not reproduced when any CI lies wholly below its threshold."
    )
    Config = UpdatesConfig
    scope = "proxy"
    scope_note = (
        "Hoffer et al. train ResNets on MNIST/CIFAR/ImageNet at batch 128 vs 4096; genlab "
        "trains a two-block BN CNN on scikit-learn digits at batch 32 vs 512 (ratio 16), "
        "constant learning rate, no weight decay or augmentation"
    )
    budgets = {"smoke": {"seeds": 3}, "full": {"seeds": 10}}
    measures = {
        "test": Final("test/heldout"),
        "train": Final("train/main"),
        "train_loss": Final("train/main", "loss"),
        "log_fit": Derived(log_vs_sqrt, "R^2 of weight distance vs log t minus vs sqrt t"),
    }
    FIT = 0.99  # per run, on the arms the gap and Ghost BN parts read: matched fit
    fit = Fit("train", FIT)
    floor = Floor("test", 0.2)  # 10 classes: chance 0.1
    figure = ArmBars("test", by="arm")
    controls = {
        "negative": Control(
            {"large_arm_updates": "equal_updates", "large_batch": 256},
            "not reproduced",
            "the 'large' arm (batch 256) gets as many updates "
            "as the small batch: by the paper's own account the gap comes from "
            "too few updates, so there is none (gap CI below 0.01)",
            budget="full",
            heavy=True,
        ),
    }

    def arms(self, cfg: UpdatesConfig):
        steps = max(1, round(cfg.epochs * cfg.train_size / cfg.small_batch))
        cnn = {"name": "cnn", "params": {"channels": cfg.channels, "pool_every": 1}}

        def spec(batch: int, updates: str, model: dict, seed: int) -> dict:
            return {
                "task": {"name": "digits", "params": {"train_size": cfg.train_size}},
                "model": model,
                "method": {"name": "erm"},
                "optimizer": {"name": "sgd", "lr": cfg.lr, "momentum": 0.9, "grad_clip": 5.0},
                "steps": steps,
                "batch_size": batch,
                "checkpoint_every": 10**6,
                "regime": {"base_batch": cfg.small_batch, "lr_scaling": "sqrt", "updates": updates},
                "eval": {
                    "every": 10**6,
                    "log_points": cfg.log_points,
                    "probes": [{"name": "accuracy"}, {"name": "loss"}, {"name": "weight_distance"}],
                },
                "seed": seed,
                "data_seed": seed,
            }

        gbn = {"name": "ghost_bn", "params": {"model": cnn, "ghost_batch": cfg.ghost_batch}}
        plan = {
            "small": (cfg.small_batch, "equal_epochs", cnn),
            "large": (cfg.large_batch, cfg.large_arm_updates, cnn),
            "large_gbn": (cfg.large_batch, "equal_epochs", gbn),
            "large_updates": (cfg.large_batch, "equal_updates", cnn),
        }
        return arms([({"arm": a}, spec(*plan[a], s)) for a in ARMS for s in range(cfg.seeds)])

    def synthetic(self, cfg: UpdatesConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: every run classifies its training set, the large batch loses 0.03, Ghost BN
        wins back 0.02 of it, equal updates all of it, the distance grows like log t; null: every
        arm alike, the distance a random walk; unfit: the large batch stops at train accuracy
        0.5."""
        test = {"small": 0.986, "large": 0.956, "large_gbn": 0.976, "large_updates": 0.985}
        train = 0.5 if case == "unfit" and arm["arm"] == "large" else 1.0
        return {
            "test": 0.986 if case == "null" else test[arm["arm"]],
            "train": train,
            "train_loss": 0.005,
            "log_fit": -0.1 if case == "null" else 0.1,
        }

    def decide(self, cfg: UpdatesConfig, table: pd.DataFrame) -> Decision:
        train = table[table["arm"].isin(("small", "large", "large_gbn"))]
        lowest = train.groupby("arm")["train"].min()
        loss = table.groupby("arm")["train_loss"].mean()
        fit_text = (
            "lowest train accuracy per run "
            + ", ".join(f"{a} {v:.3f}" for a, v in lowest.items())
            + "; mean train loss "
            + ", ".join(f"{a} {loss.get(a, math.nan):.4f}" for a in ARMS)
        )
        if not (lowest >= self.FIT).all():  # includes NaN: a missing or diverged run
            return Decision(
                "inconclusive",
                {f"train_min_{a}": v for a, v in lowest.items()},
                f"Not at matched fit ({cfg.epochs} epochs): a run of the small "
                f"batch, the large batch or Ghost BN did not classify its training "
                f"set (train accuracy < {self.FIT:g}): {fit_text}.",
            )
        acc = {a: by_seed(table, a, "test") for a in ARMS}
        gap = acc["small"] - acc["large"]
        recovered = acc["large_updates"] - acc["large"] - gap / 2
        ivs = [
            Interval.of("small - large (gap)", gap.tolist(), null=0, smallest=0.01),
            Interval.of("large_updates - large - gap/2", recovered.tolist(), null=0),
            Interval.of("large_gbn - large", (acc["large_gbn"] - acc["large"]).tolist(), null=0),
            Interval.of(
                "R^2(log t) - R^2(sqrt t)", by_seed(table, "small", "log_fit").tolist(), null=0
            ),
        ]
        stats = {
            **{f"test_{a}": v.mean() for a, v in acc.items()},
            "gap": gap.mean(),
            "recovered_share": float((acc["large_updates"] - acc["large"]).mean() / gap.mean())
            if gap.mean()
            else math.nan,
            "gbn_gain": (acc["large_gbn"] - acc["large"]).mean(),
            "log_minus_sqrt_r2": by_seed(table, "small", "log_fit").mean(),
        }
        sentence = (
            "Test accuracy "
            + ", ".join(f"{a} {stats[f'test_{a}']:.3f}" for a in ARMS)
            + f" (batch {cfg.small_batch} vs {cfg.large_batch}, {cfg.epochs} epochs, "
            f"{len(gap)} seeds); share of the gap recovered by equal updates "
            f"{stats['recovered_share']:.2f}: "
            + "; ".join(iv.text() for iv in ivs)
            + f". Matched fit: {fit_text}."
        )
        return Decision(combine([iv.verdict() for iv in ivs]), stats, sentence, ivs)


register(UpdatesNotBatch())
