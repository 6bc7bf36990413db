"""``lora.hub`` (Huang et al. 2023, #2): LoRAs trained on upstream tasks, merged with weights found
gradient-free on a few examples of an unseen task, beat the base model and their uniform average.

Protocol (catalogue row 2, scaled to CPU): the ``skill_family`` tasks (a shared feature map, each
upstream task one rank-1 "skill" added to a generic read-out, each unseen task two of them); a
base MLP pretrained on the generic task; 8 rank-4 LoRAs (PEFT), one per upstream task; for each of
16 unseen tasks, 5 shots per class; LoraHub's search as its code (nevergrad NGOpt, w in [-1.5,
1.5] from 0, budget 40, l1 0.05 on mean|w|). Paired over unseen tasks. Best-single and few-shot
LoRA fine-tuning are reported beside (the paper: LoraHub approaches few-shot fine-tuning). The
paper's LoRAs adapt attention of FLAN-T5 and are evaluated on Big-Bench Hard; here they adapt the
read-out of a tiny MLP, where the family's skills live (``lora_hub``'s ``targets="head"``).
"""

from __future__ import annotations

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.guards import Fit, Floor, Interval, combine
from genlab.claims.measures import Final
from genlab.design import Design
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars
from genlab.spec import load_spec_file

MODES = ("base", "uniform", "lorahub", "best_single", "finetune")


class HubConfig(Params):
    """Unseen tasks, shots and data seeds of the comparison."""

    tasks: list[int] = Field(list(range(8, 24)), min_length=1, description="task ids (-1: generic)")
    n_unseen: int = Field(16, ge=1)
    shots: int = Field(5, ge=1)
    seeds: int = Field(1, ge=1, description="data seeds per task")
    budget: int = Field(40, ge=1)
    ft_steps: int = Field(200, ge=1, description="Adam steps of the few-shot fine-tuning arm")
    ft_lr: float = Field(1e-2, gt=0)


class LoraHubClaim(Claim):
    """LoraHub beats the base and the uniform merge on unseen tasks (Huang et al., #2)."""

    id = "lora.hub"
    papers = (
        Ref(
            2,
            "Huang, Liu, Lin, Pang, Du & Lin 2023",
            "LoraHub: efficient cross-task generalization via dynamic LoRA composition",
        ),
    )
    statement = (
        "On unseen tasks from 5 shots per class, LoraHub's test accuracy exceeds the base model's "
        "and the uniform merge's: each paired difference has its 95% CI above 0 and an estimate "
        ">= 0.02 (not reproduced when either CI lies below 0.02)."
    )
    Config = HubConfig
    scope = "proxy"
    scope_note = (
        "The paper composes LoRAs of FLAN-T5 trained on FLAN tasks and evaluates on Big-Bench "
        "Hard; here rank-4 LoRAs on the read-out of a tiny MLP, on synthetic skill_family "
        "tasks whose unseen tasks combine two upstream skills."
    )
    budgets = {"smoke": {}, "full": {}}  # the whole comparison takes ~20 s
    SMALLEST = 0.02
    measures = {"test": Final("test/heldout"), "shots": Final("train/main")}
    replicates = ("seed", "data_seed", "task")
    fit = Fit("shots", 0.9, where={"mode": ("finetune",)})  # the base can be adapted at all
    floor = Floor("test", 0.2)
    figure = ArmBars("test", by="mode")
    controls = {
        "negative": Control(
            {"tasks": [-1], "seeds": 5},
            "not reproduced",
            "Huang et al.: LoraHub moves the base toward the new task through related modules; on "
            "the base's own (generic) task there is nothing to move toward",
        ),
        "positive": Control(
            {"tasks": list(range(8))},
            "reproduced",
            "on the upstream tasks themselves the library holds each task's own module",
        ),
    }

    def arms(self, cfg: HubConfig):
        base = load_spec_file("lora-hub")
        base["task"]["params"].update(shots=cfg.shots, n_unseen=cfg.n_unseen)
        base["method"]["params"]["budget"] = cfg.budget
        ft = {
            "steps": cfg.ft_steps,
            "optimizer": {"name": "adam", "lr": cfg.ft_lr},
            "eval.every": cfg.ft_steps,
        }
        axes = {
            "mode": {m: {"method.mode": m, **(ft if m == "finetune" else {})} for m in MODES},
            "task": {t: {"task.task": t} for t in cfg.tasks},
        }
        return Design(base, axes=axes, seeds=cfg.seeds).expand()

    def synthetic(self, cfg: HubConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: LoraHub 0.45 against base 0.32 and uniform 0.33-0.34; null: LoraHub at the
        base's 0.32; unfit: the few-shot fine-tuning fits its shots only to 0.5."""
        lorahub = 0.45 if case != "null" else 0.32
        test = {
            "base": 0.32,
            "uniform": 0.33 + 0.01 * (arm["task"] % 2),
            "lorahub": lorahub,
            "best_single": 0.5,
            "finetune": 0.53,
        }[arm["mode"]]
        fit = 0.5 if case == "unfit" else 1.0
        return {"test": test, "shots": fit if arm["mode"] == "finetune" else 0.5}

    def decide(self, cfg: HubConfig, table: pd.DataFrame) -> Decision:
        acc = table.pivot_table(index=["task", "seed"], columns="mode", values="test")
        ivs = [
            Interval.of(
                f"lorahub - {m}",
                (acc["lorahub"] - acc[m]).tolist(),
                null=0.0,
                smallest=self.SMALLEST,
            )
            for m in ("base", "uniform")
        ]
        stats = {f"test_{m}": float(acc[m].mean()) for m in acc.columns}
        stats.update({f"diff_{iv.name.split()[-1]}": iv.estimate for iv in ivs})
        gap = float((acc["finetune"] - acc["lorahub"]).mean())
        sentence = (
            f"Test accuracy over {len(acc)} task(s) x seed(s): lorahub "
            f"{stats['test_lorahub']:.3f}, base {stats['test_base']:.3f}, uniform "
            f"{stats['test_uniform']:.3f}, best single {stats['test_best_single']:.3f}, "
            f"few-shot LoRA fine-tuning {stats['test_finetune']:.3f} (gap {gap:+.3f})."
        )
        stats["finetune_minus_lorahub"] = gap
        return Decision(combine([iv.verdict() for iv in ivs]), stats, sentence, tuple(ivs))


register(LoraHubClaim())
