"""``cl.model_zoo`` (Ramesh & Chaudhari 2022, #120): a growing zoo of small models beats one model
trained with fine-tuning, replay or EWC on the same task sequence, at matched memory.

Protocol (catalogue row 120, scaled to CPU): permuted digits, 5 experiences, task-incremental (the
experience is known at test, as in the paper's multi-head benchmarks); one-hidden-layer MLPs, the
single models of width 100 and the zoo's 5 members of width 20 (the same number of parameters);
replay and the zoo share one bounded memory of 200 examples; EWC's lambda is 100, the largest of
{100, 1000, 10000} at which every experience is still learned (mean R[j, j] >= 0.8; larger values
stop it learning the later ones); every arm at its best learning rate of {1e-3, 3e-3} (the one
with the highest mean average accuracy: the same oracle selection for all); 5 seeds, paired.
Differences from the paper: a bounded memory instead of all past data, one member per episode,
and 8x8 digits instead of its image benchmarks.
"""

from __future__ import annotations

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.cl._common import MEASURES, ContinualConfig, at_best, continual_base, lr_axis
from genlab.claims.guards import Fit, Floor, Interval
from genlab.design import Design
from genlab.report.claim_figures import ArmBars


class ZooConfig(ContinualConfig):
    """The comparison's knobs: the zoo's past tasks per episode and the shared memory."""

    past_tasks: int = Field(2, ge=0)
    buffer_size: int = Field(200, ge=1)
    ewc_lambda: float = Field(100.0, ge=0)


class ModelZoo(Claim):
    """Model Zoo's average accuracy beats fine-tune, replay and EWC (Ramesh & Chaudhari, #120)."""

    id = "cl.model_zoo"
    papers = (
        Ref(120, "Ramesh & Chaudhari 2022", "Model Zoo: a growing brain that learns continually"),
    )
    statement = (
        "At matched parameters and memory, Model Zoo's average final accuracy exceeds the best of "
        "fine-tune, replay and EWC: the paired difference over seeds has its 95% CI above 0 and "
        "an estimate >= 0.02 (not reproduced when the CI lies below 0.02)."
    )
    Config = ZooConfig
    scope = "proxy"
    scope_note = (
        "Ramesh & Chaudhari use image benchmarks (MNIST variants, CIFAR, mini-ImageNet) "
        "with all past data; genlab uses 8x8 permuted digits, "
        "one-hidden-layer MLPs, a bounded memory of 200 examples and one member per "
        "episode"
    )
    budgets = {"smoke": {"steps": 1000, "seeds": 3, "lrs": [3e-3]}, "full": {}}
    SMALLEST = 0.02
    measures = MEASURES
    replicates = ("seed", "data_seed", "lr")  # guards see each method over seeds and lrs
    fit = Fit("learned", 0.8)
    floor = Floor("avg_accuracy", 0.2)
    figure = ArmBars("avg_accuracy", by="method")
    controls = {
        "negative": Control(
            {"variant": "rotated", "max_angle": 0.0},
            "not reproduced",
            "Ramesh & Chaudhari's theory: when the tasks are synergistic (here five draws of the "
            "same task) one model trained on all of them is at least as good as splitting its "
            "capacity into small models",
            slow=True,
        ),
        "positive": Control(
            {"past_tasks": 0},
            "reproduced",
            "the zoo with each member isolated on its own permutation: competing tasks no longer "
            "share a small model, the gain the paper's theory predicts",
            slow=True,
        ),
    }

    def arms(self, cfg: ZooConfig):
        small = cfg.width // cfg.experiences
        methods = {
            "finetune": {"method": {"name": "finetune"}},
            "ewc": {"method": {"name": "ewc", "params": {"ewc_lambda": cfg.ewc_lambda}}},
            "replay": {"method": {"name": "replay", "params": {"buffer_size": cfg.buffer_size}}},
            "model_zoo": {
                "method": {
                    "name": "model_zoo",
                    "params": {"buffer_size": cfg.buffer_size, "past_tasks": cfg.past_tasks},
                },
                "model.width": small,
            },
        }
        axes = {"method": methods, **lr_axis(cfg)}
        return Design(continual_base(cfg), axes=axes, seeds=cfg.seeds).expand()

    def synthetic(self, cfg: ZooConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: the zoo 0.90 against replay 0.85 (fine-tune 0.50, EWC 0.52), each 0.05 lower at
        the smaller lr; null: the zoo at replay's 0.85; unfit: the zoo learns each experience only
        to 0.6."""
        acc = {
            "finetune": 0.5,
            "ewc": 0.52,
            "replay": 0.85,
            "model_zoo": 0.85 if case == "null" else 0.90,
        }[arm["method"]]
        shift = -0.05 if arm["lr"] < max(cfg.lrs) else 0.0
        learned = 0.6 if case == "unfit" and arm["method"] == "model_zoo" else 0.9
        return {"avg_accuracy": acc + shift, "forgetting": 0.1, "learned": learned}

    def decide(self, cfg: ZooConfig, table: pd.DataFrame) -> Decision:
        acc, lrs = at_best(table)
        others = acc.drop(columns="model_zoo")
        best = others.mean().idxmax()
        iv = Interval.of(
            f"model_zoo - {best}",
            (acc["model_zoo"] - acc[best]).tolist(),
            null=0.0,
            smallest=self.SMALLEST,
        )
        stats = {f"avg_accuracy_{m}": float(acc[m].mean()) for m in acc.columns}
        stats.update(diff=iv.estimate, diff_lo=iv.lo, diff_hi=iv.hi)
        stats.update({f"lr_{m}": lr for m, lr in lrs.items()})
        sentence = (
            f"Average final accuracy: model_zoo {acc['model_zoo'].mean():.3f} vs the best "
            f"baseline, {best}, {acc[best].mean():.3f}, each at its best lr (paired difference "
            f"{iv.estimate:+.3f} [{iv.lo:+.3f}, {iv.hi:+.3f}], n={iv.n}) on "
            f"{cfg.variant} digits, {cfg.scenario}-incremental."
        )
        return Decision(iv.verdict(), stats, sentence, (iv,))


register(ModelZoo())
