"""``comp.diffuse_distributions`` (#49, Zhang, Schwarzschild, Carlini, Kolter & Ippolito, COLM
2024, "Forcing diffuse distributions out of language models"; tier T3): fine-tuning an LM to
match a diffuse target over the valid outcomes of some "pick at random" prompts makes its picks
diffuse on other tasks and outcome sets too.

The paper fine-tunes instruction-tuned LLMs (Llama-2-13B-chat, Mistral-7B-Instruct, Gemma-7B-it;
LoRA rank 4 on every projection, AdamW lr 5e-5, 50 passes in the leave-one-out configs) with the
loss ``-sum_y w_y log p(y | prompt)`` over each prompt's valid target strings (official code,
``y0mingzhang/diffuse-distributions``, ``src/search.py``), and reports that a fine-tune on some
tasks (baby names, countries, dates, fruits, occupations) also makes the model diffuse on a
held-out task (numbers), judged by samples: coverage, entropy, and closeness to the target.

genlab's proxy on ``diffuse_picks`` (``tasks/diffuse_picks.py``): prompts ``[FAM_f, o_1..o_k,
QUERY]`` ask for a random pick among 3-6 listed outcomes of one of 6 families (tasks); the
pretraining corpus answers with the first-listed outcome 60% of the time, else uniformly. Per
seed a 2-layer ``transformer`` (d_model 64) is pre-trained on every family (``untuned``), then
fine-tuned from those weights (``from_run``) on fresh prompts of families 0-2 only, in two arms of
equal steps and learning rate: ``diffuse`` (``methods/diffuse.py``: the paper's loss toward the
uniform distribution over each prompt's listed outcomes) and ``sft`` (ERM on the biased corpus's
answers to the same prompts: the compute-matched control). The measure is the mean
``KL(uniform over the listed outcomes || p)`` (``probes/diffuseness.py``) on fresh prompts of
families 3-5 (``test/heldout``), whose outcomes no fine-tuning prompt lists; entropy, coverage@10
and the valid mass are reported next to it.

Differences from the paper: a ~100k-parameter transformer pre-trained from scratch on a synthetic
corpus instead of an instruction-tuned LLM; the bias is a position bias (the first-listed outcome)
put in by the corpus, where the LLMs' biases are content biases ("five", "Avery") of unknown
origin; the valid set is listed in the prompt (the LLMs know it from pretraining); one-token
outcomes, so sequence probabilities are single softmax entries; full fine-tuning with Adam instead
of LoRA; uniform targets only (the paper also matches population rates); exact metrics from the
softmax instead of 1000 samples per prompt; held-out families instead of held-out natural tasks.

Controls: negative, the ``diffuse`` arm fine-tunes toward the corpus's own biased distribution
(``target="first"``, 0.6 on the first-listed): the same method and data with no diffuseness to
teach, so by the paper's logic held-out KL must not fall (its own fine-tuning runs; the
pre-training and ``sft`` runs are the claim's). Positive: the claim's runs read on fresh prompts
of the fine-tuned families (``read="trained"``), where matching the target is what was trained:
it shows the measure and thresholds can reach "reproduced" (it trains no runs of its own).

Pilot (Dec 3 2026, before freezing; seed 0 only): it read the wall time and the validation fit of
the pre-training run (``untuned``) alone, never a test split nor a fine-tune: 1500 steps took 48 s
on the loaded machine, with validation accuracy 0.704 (the corpus allows about 0.70) and 0.98 of
the mass on the listed outcomes. That kept 1500 pre-training steps and four seeds.

Measured Dec 3 2026 at full (4 seeds; 290 s wall for the claim and both controls, 195 CPU s, at a
load average of 4-6 on 2 cores; store ``genlab-runs/h-49``): inconclusive (the judge decided
"reproduced", which the negative control does not license). Held-out families: KL untuned 0.593,
sft 0.497, diffuse 0.299 (entropy 0.929 / 1.015 / 1.225 nats, coverage@10 0.658 / 0.695 / 0.784,
valid mass 0.976 / 0.969 / 0.958); untuned - diffuse 0.294 [0.194, 0.394], sft - diffuse 0.198
[0.115, 0.282]. Positive control (the fine-tuned families): reproduced, KL 0.588 / 0.543 / 0.019,
gains 0.570 [0.554, 0.585] and 0.525 [0.507, 0.542]. Negative control (fine-tuned toward the
corpus's 0.6 bias): inconclusive, held-out KL 0.452, untuned - diffuse 0.140 [0.127, 0.154]
(condition (a) holds without any diffuse target), sft - diffuse 0.045 [0.025, 0.064] (straddles
0.05). So the pre-trained model is sharper than its own corpus (held-out KL 0.59 where the corpus
itself sits near 0.44), and any fine-tune toward an exact distribution calibrates it on held-out
families too: condition (a) does not isolate diffuseness, and (b) separates the uniform target
(0.198) from the biased one (0.045) only by a margin the negative control's four seeds cannot
place below 0.05. What would decide it: a negative control with more seeds (controls do not
follow the seed rule), or a design whose comparison is the uniform against the biased target
directly; neither was run, as both change the design after this result.
"""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.guards import Fit, Floor, Guard, Interval, NotApplicable, combine
from genlab.claims.measures import Final
from genlab.design import Arm
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars
from genlab.spec import parse_spec

LM = {"name": "transformer", "params": {"d_model": 64, "n_layers": 2, "n_heads": 4}}
ARMS = ("untuned", "diffuse", "sft")


class DiffuseConfig(Params):
    """The corpus, the two stages' budgets, the fine-tuning target and the prompts read."""

    bias: float = Field(0.6, ge=0, le=1, description="corpus share forced to the first-listed")
    ft_families: int = Field(3, ge=1, description="families 0..ft_families-1 are fine-tuned on")
    target: Literal["uniform", "first"] = Field("uniform", description="the diffuse arm's target")
    read: Literal["heldout", "trained"] = Field("heldout", description="test prompts decided on")
    pre_steps: int = Field(1500, ge=1)
    ft_steps: int = Field(200, ge=1)
    pre_lr: float = Field(1e-3, gt=0)
    ft_lr: float = Field(3e-4, gt=0)
    n_train: int = Field(20000, ge=1, description="prompts per training set")
    seeds: int = Field(4, ge=2)


def _spec(
    cfg: DiffuseConfig,
    stage: str,
    model: dict[str, Any],
    method: dict[str, Any],
    steps: int,
    lr: float,
    seed: int,
) -> dict[str, Any]:
    task = {
        "name": "diffuse_picks",
        "params": {
            "bias": cfg.bias,
            "ft_families": cfg.ft_families,
            "stage": stage,
            "n_train": cfg.n_train,
        },
    }
    return {
        "task": task,
        "model": model,
        "method": method,
        "optimizer": {"name": "adamw", "lr": lr, "weight_decay": 0.0, "betas": [0.9, 0.999]},
        "steps": steps,
        "batch_size": 128,
        "checkpoint_every": steps,
        "seed": seed,
        "data_seed": seed,
        "eval": {
            "every": steps,
            "log_points": 0,
            "probes": [{"name": "accuracy"}, {"name": "diffuseness"}],
        },
    }


class DiffuseDistributions(Claim):
    """A distribution-matching fine-tune on some tasks makes picks diffuse on held-out tasks
    (#49)."""

    id = "comp.diffuse_distributions"
    papers = (
        Ref(
            49,
            "Zhang, Schwarzschild, Carlini, Kolter & Ippolito 2024",
            "Forcing diffuse distributions out of language models",
        ),
    )
    statement = (
        "On diffuse_picks (6 families of 6 outcomes; a corpus answering 'pick at random' with the "
        "first-listed outcome 60% of the time), a 2-layer transformer pre-trained on every family "
        "and fine-tuned for 200 steps on families 0-2 with the distribution-matching loss toward "
        "the uniform over each prompt's listed outcomes has a lower mean KL(uniform || p) on fresh "
        "prompts of families 3-5 than (a) the un-tuned pre-trained model and (b) the same "
        "fine-tune with cross-entropy on the corpus's answers, each by >= 0.05 nats (paired 95% "
        "CIs over seeds above 0). Not reproduced when either CI lies wholly below 0.05."
    )
    Config = DiffuseConfig
    scope = "proxy"
    scope_note = (
        "Instruction-tuned 7-13B LLMs LoRA-tuned on natural 'pick at random' prompts (names, "
        "fruits, countries, ...) and tested on a held-out task replaced by a ~100k-parameter "
        "transformer pre-trained on a synthetic corpus with a first-listed bias, fully fine-tuned "
        "on 3 of 6 outcome families and tested on the other 3; exact softmax metrics"
    )
    budgets = {"smoke": {"pre_steps": 150, "ft_steps": 30, "n_train": 2000, "seeds": 2}, "full": {}}
    smoke_decides = False  # 2 seeds and a few steps only check that the code runs
    GAIN = 0.05  # nats, fixed before running
    measures = {
        f"{m}_{s}": Final(f"test/{s}", m)
        for s in ("heldout", "trained")
        for m in ("kl", "entropy", "coverage", "valid")
    }
    fit = Fit("valid_heldout", 0.9)  # every arm keeps its picks on the listed outcomes
    floor = Floor("valid_heldout", 0.3)  # chance: a listed set holds 3-6 of 36 classes
    figure = ArmBars("kl_heldout", by="arm")
    controls = {
        "negative": Control(
            {"target": "first"},
            "not reproduced",
            "the diffuse arm is "
            "fine-tuned toward the corpus's own bias (0.6 on the first-listed "
            "outcome): the same loss and prompts with no diffuseness to teach, "
            "so by the paper's logic held-out KL to uniform must not fall (its "
            "own fine-tuning runs)",
            budget="full",
            heavy=True,
            open="Measured Dec 3 2026 (full, 4 seeds): inconclusive; untuned - "
            "diffuse 0.140 [0.127, 0.154] (any exact-distribution fine-tune "
            "calibrates the over-sharp pre-trained model), sft - diffuse 0.045 "
            "[0.025, 0.064], straddling 0.05; more seeds would decide (b)",
        ),
        "positive": Control(
            {"read": "trained"},
            "reproduced",
            "read on fresh prompts of the "
            "fine-tuned families, where the diffuse target is what was trained: "
            "shows that the measure and thresholds reach 'reproduced' (the "
            "claim's runs, no new training)",
            budget="full",
            heavy=True,
        ),
    }

    def guards(self, cfg: DiffuseConfig) -> list[Guard]:
        """Read on held-out families with a uniform target, the diffuse arm must also fit that
        target on its own families (KL <= 0.05 nats there); a fine-tune toward the corpus's bias
        has no such level, and read on its own families the fit is what the decision reads."""
        own = (
            Fit("kl_trained", 0.05, where={"arm": ("diffuse",)}, below=True)
            if cfg.target == "uniform" and cfg.read == "heldout"
            else NotApplicable(
                "fit of the fine-tuning target",
                "target 'first' is the corpus's "
                "bias, which the pre-trained model already fits; or the decision "
                "reads the fine-tuned families themselves",
            )
        )
        return [self.fit, self.floor, own]

    def arms(self, cfg: DiffuseConfig) -> list[Arm]:
        out = []
        target = {"target": cfg.target, "bias": cfg.bias}
        for s in range(cfg.seeds):
            pre = parse_spec(
                _spec(cfg, "pretrain", LM, {"name": "erm"}, cfg.pre_steps, cfg.pre_lr, s)
            )
            out.append(Arm({"arm": "untuned", "seed": s, "data_seed": s}, pre))
            model = {"name": "from_run", "params": {"run": pre.run_id}}
            for arm, method in (
                ("diffuse", {"name": "diffuse", "params": target}),
                ("sft", {"name": "erm"}),
            ):
                ft = parse_spec(_spec(cfg, "finetune", model, method, cfg.ft_steps, cfg.ft_lr, s))
                out.append(Arm({"arm": arm, "seed": s, "data_seed": s}, ft))
        return out

    def synthetic(self, cfg: DiffuseConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: KL 0.40 (untuned), 0.38 (sft), 0.10 (diffuse) on both prompt sets, the
        diffuse arm 0.01 on its own families; null: the diffuse arm's held-out KL as the others'
        (0.38); unfit: as effect with the diffuse arm's valid mass at 0.5."""
        kl = {"untuned": 0.40, "sft": 0.38, "diffuse": 0.10}[arm["arm"]]
        trained = 0.01 if arm["arm"] == "diffuse" else kl
        held = 0.38 if case == "null" and arm["arm"] == "diffuse" else kl
        valid = 0.5 if case == "unfit" and arm["arm"] == "diffuse" else 0.99
        if case == "null" and cfg.read == "trained" and arm["arm"] == "diffuse":
            trained = 0.38
        out = {}
        for s, v in (("heldout", held), ("trained", trained)):
            out |= {
                f"kl_{s}": v,
                f"entropy_{s}": 1.4 - v,
                f"coverage_{s}": 0.9 - v,
                f"valid_{s}": valid,
            }
        return out

    def decide(self, cfg: DiffuseConfig, table: pd.DataFrame) -> Decision:
        r = cfg.read
        wide = table.pivot_table(
            index="seed",
            columns="arm",
            values=[f"kl_{r}", f"entropy_{r}", f"coverage_{r}", f"valid_{r}"],
        )
        kl = wide[f"kl_{r}"]
        ivs = [
            Interval.of(
                f"KL untuned - diffuse ({r})",
                (kl["untuned"] - kl["diffuse"]).dropna(),
                null=0.0,
                smallest=self.GAIN,
            ),
            Interval.of(
                f"KL sft - diffuse ({r})",
                (kl["sft"] - kl["diffuse"]).dropna(),
                null=0.0,
                smallest=self.GAIN,
            ),
        ]
        stats = {
            f"{m}_{a}": wide[f"{m}_{r}"][a].mean()
            for m in ("kl", "entropy", "coverage", "valid")
            for a in ARMS
            if a in kl
        }
        arms = ", ".join(
            f"{a} KL {stats[f'kl_{a}']:.3f} (entropy {stats[f'entropy_{a}']:.3f}, "
            f"coverage@10 {stats[f'coverage_{a}']:.3f}, valid "
            f"{stats[f'valid_{a}']:.3f})"
            for a in ARMS
            if a in kl
        )
        sentence = (
            f"On {r} prompts over {len(kl)} seeds (diffuse target {cfg.target}): {arms}; "
            + "; ".join(iv.text() for iv in ivs)
            + "."
        )
        return Decision(combine([iv.verdict() for iv in ivs]), stats, sentence, ivs)


register(DiffuseDistributions())
