"""``comp.skill_mix`` (Zhao et al. 2024, #56): training on compositions of k = 2, 3 skills
transfers to composing k = 4, 5 skills never seen together.

String-transformation skills named by instruction tokens (``skill_mix``: reverse, rotations,
letter shifts, sort, swap the ends, a letter map; 7 composable, 1 trained only alone), applied left
to right. Two arms on the same data seed: training compositions of ``k <= 3`` skills, and single
skills only (``k = 1``), the same number of rows; exact match (greedy) on 4 and 5 skills composed.
Compositions that include the held-out skill (``test/heldout_skill``) are reported, not judged.

Differences from Zhao et al.: symbolic string skills instead of GPT-4-written text exhibiting
language skills (rhetoric, theory of mind, ...); an LSTM encoder-decoder with attention trained
from scratch instead of fine-tuning LLaMA-2 7B/13B; exact match of the transformed string instead
of GPT-4 grading; the held-out skills are one skill trained alone (seen as a skill, never composed),
not whole held-out skill categories never seen at all; 3 seeds.
"""

from __future__ import annotations

from typing import Literal

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Claim, Control, Decision, Ref
from genlab.claims.comp._common import LSTM, TrainConfig, paired, spec
from genlab.claims.guards import Fit, Floor, Interval, combine
from genlab.claims.measures import Final
from genlab.design import Design
from genlab.report.claim_figures import ArmBars

TASK = {"n_skills": 8, "alphabet": 8, "length": 6, "heldout_skills": 1, "test_k": [1, 4, 5],
        "n_val": 500, "n_test": 500}  # fmt: skip


class SkillMixConfig(TrainConfig):
    train_k: tuple[int, int] = Field((1, 3), description="longest training composition: "
                                     "single skills, composed")  # fmt: skip
    n_train: int = Field(20_000, ge=1, description="training rows of each arm")
    on: Literal["composed", "k1"] = Field(
        "composed", description="judge on k = 4 and 5 (the claim) or on single skills (k = 1)"
    )
    min_gain: float = Field(0.1, gt=0, description="gain the claim states, on each judged k")


class SkillMix(Claim):
    """Training on k <= 3 skill compositions, not k = 1, transfers to k = 4, 5 (#56)."""

    id = "comp.skill_mix"
    papers = (Ref(56, "Zhao et al. 2024", "Can models learn skill composition from examples?"),)
    statement = (
        "At the same number of training rows, training on compositions of up to 3 string skills "
        "instead of single skills raises exact match on compositions of 4 and of 5 skills (never "
        "seen in training) by >= 0.1 each (paired-seed 95% CIs above 0), every arm fitting its "
        "training distribution (val exact match >= 0.9)."
    )
    Config = SkillMixConfig
    budgets = {"smoke": {"steps": 400, "n_train": 4000, "seeds": 2},
               "full": {"steps": 3000, "seeds": 3}}  # fmt: skip
    measures = {"val": Final("val/main", "exact_match"), "k1": Final("test/k1", "exact_match"),
                "k4": Final("test/k4", "exact_match"), "k5": Final("test/k5", "exact_match"),
                "heldout": Final("test/heldout_skill", "exact_match")}  # fmt: skip
    fit = Fit("val", 0.9)
    floor = Floor("k4", 0.02)
    figure = ArmBars("k4", by="train_k")
    controls = {
        "negative": Control({"on": "k1"}, "not reproduced", "the full arms judged on single "
                            "skills (k = 1), which the k = 1 arm trains on three times as often: "
                            "composition training buys nothing there", budget="full",
                            heavy=True),
        "positive": Control({}, "reproduced", "the full budget shows the composition transfer",
                            budget="full", heavy=True),
    }  # fmt: skip

    def judged(self, cfg: SkillMixConfig) -> tuple[str, ...]:
        return ("k4", "k5") if cfg.on == "composed" else ("k1",)

    def guards(self, cfg: SkillMixConfig):
        """The floor guards the first measure judged (k = 4, or single skills)."""
        return [self.fit, Floor(self.judged(cfg)[0], self.floor.level)]

    def arms(self, cfg: SkillMixConfig):
        base = spec(cfg, "skill_mix", {**TASK, "n_train": cfg.n_train}, "seq2seq_rnn", LSTM,
                    ("exact_match",))  # fmt: skip
        return Design(base, axes={"train_k": {k: {"task.train_k": k} for k in cfg.train_k}},
                      seeds=cfg.seeds).expand()  # fmt: skip

    def decide(self, cfg: SkillMixConfig, table: pd.DataFrame) -> Decision:
        single, composed = cfg.train_k
        ivs, stats = [], {}
        for m in self.judged(cfg):
            gain = paired(table, m, {"train_k": composed}, {"train_k": single})
            iv = Interval.of(f"{m} gain (k <= {composed} - k = {single})", gain,
                             smallest=cfg.min_gain)  # fmt: skip
            ivs.append(iv)
            stats[f"{m}_gain"] = iv.estimate
        means = table.groupby("train_k")[list(self.measures)].mean()
        for k in (single, composed):
            for m in ("val", "k1", "k4", "k5", "heldout"):
                stats[f"{m}_train_k{k}"] = means.loc[k, m] if k in means.index else float("nan")
        held = paired(table, "heldout", {"train_k": composed}, {"train_k": single})
        stats["heldout_gain"] = Interval.of("h", held).estimate
        per_arm = "; ".join(
            f"train k <= {k}: val {stats[f'val_train_k{k}']:.3f}, k1 {stats[f'k1_train_k{k}']:.3f}"
            f", k4 {stats[f'k4_train_k{k}']:.3f}, k5 {stats[f'k5_train_k{k}']:.3f}, held-out "
            f"skill {stats[f'heldout_train_k{k}']:.3f}"
            for k in (single, composed)
        )
        sentence = (f"Exact match over {cfg.seeds} seeds ({per_arm}); "
                    f"{'; '.join(iv.text() for iv in ivs)}; held-out-skill gain "
                    f"{stats['heldout_gain']:+.3f} (reported, not judged).")  # fmt: skip
        return Decision(combine([iv.verdict() for iv in ivs]), stats, sentence, ivs)


register(SkillMix())
