"""``comp.function_masking`` (#26, Hammer: Lin et al. 2024, "Hammer: robust function-calling
for on-device language models via function masking"; tier T3): masking function names in
training makes a function-calling model rely on descriptions, so it holds up when functions are
renamed, where a model trained on the original names drops.

The paper fine-tunes Qwen2 / DeepSeek-Coder models (1.5-7B) on xLAM-function-calling-60k plus
7.5k irrelevance examples, tripled, with 2/3 of the examples "masked" (official code,
``MadeAgents/Hammer``, ``data_processing.py``: every function name and parameter name replaced by
a random 5-15 / 4-10 character string, default values replaced, the tool list shuffled), and
reports robust accuracy across benchmarks whose naming conventions differ (API-Bank,
NexusRaven, Seal-Tools, ToolAlpaca, BFCL), above larger models trained on the plain data.

genlab's proxy on ``function_calls`` (``tasks/function_calls.py``): 40 functions with a
canonical name token and a 2-word description; a prompt lists 3 of them (``[name, 2 description
words]`` each) and then the query (``[QUERY, keyword, 1 of the target's description words,
END]``), whose keyword is the target's own name: the naming shortcut. A 2-layer
``transformer`` (d_model 64) is trained with ERM to output the target's slot, in two arms that
share each seed's data and test prompts: ``plain`` (canonical names) and ``masked`` (Hammer's
ratio: 67% of training prompts have every name replaced by a random name token). The test
prompts come three ways: ``original`` names, ``renamed`` (random names: the name says nothing)
and ``swapped`` (names permuted among the candidates: the keyword points at a wrong function);
the decision reads the mean of ``renamed`` and ``swapped``.

Differences from the paper: single-token names and words instead of strings; one call, no
arguments, so parameter-name and default-value masking and the irrelevance data are not tested;
choosing a slot instead of generating a JSON call; a 2-layer transformer trained from scratch
instead of fine-tuning a pre-trained LLM; the shortcut is built in (the query echoes the
target's name) where the benchmarks' naming overlap is natural; renamed and swapped names of
the same functions instead of benchmarks with other naming conventions; no tripling of the data.

Controls: negative, the query does not echo the name (``keyword=False``): no naming shortcut in
the data, so by the paper's logic plain training already relies on descriptions and masking
buys nothing (its own runs). Positive: every training prompt masked (``mask=1.0``): names never
carry the answer in training, the strongest dose of the paper's remedy (its own masked runs).

Pilot (Dec 3 2026, before freezing; seed 0, the ``plain`` arm only; what it read: its wall time
and its training-distribution fit, ``val/main``, never a test split nor the masked arm). With 4
candidates, 3-word descriptions, 2 query words and a FUNC token per candidate (25 tokens), 2000
steps took 151 s and reached val 0.71; with 3 candidates, 2-word descriptions, 1 query word and
no FUNC token (13 tokens), 1500 steps took 65 s and reached val 0.95. That set the task, 1500
steps, four seeds and the fit level (0.9).

Measured Dec 3 2026 at full (4 seeds; 1449 s wall for the claim and both controls, 815 CPU s, at
a load average of 6-7 on 2 cores, well over the ten minutes planned from the pilot; store
``genlab-runs/h-26``): inconclusive, by the fit guard. Accuracy plain: original 0.854, renamed
0.360, swapped 0.113; masked: 0.824, 0.819, 0.808; masked - plain on renamed/swapped 0.577
[0.207, 0.947], plain's fall 0.618 [0.299, 0.936] (the judge's own decision: reproduced), but the
arms' mean val accuracy is 0.857 (plain) and 0.832 (masked), below 0.9: the 20 runs' final val
accuracies are bimodal (eleven at 0.95-1.0, six at 0.65-0.79), some seeds not having learned the
matching by step 1500. Negative control (no keyword echo): reproduced, not the expected "not
reproduced": plain 0.946 / 0.796 / 0.824, masked 0.953 / 0.953 / 0.952, gain 0.142 [0.053,
0.232], fall 0.135 [0.056, 0.215]; the names identify the functions even when the query does not
echo them, so plain training still leans on them, and the control's premise fails at this scale.
Positive control (every prompt masked): inconclusive by the same fit guard (val 0.857 / 0.814;
gain 0.535 [0.307, 0.763]). What would decide it: a budget at which every seed fits (more steps,
or the design rerun at 8 seeds) and a negative control without any name-identity cue (e.g. both
arms masked); neither was run, as both change the design after this result.
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

LM = {"name": "transformer", "params": {"d_model": 64, "n_layers": 2, "n_heads": 4}}
SPLITS = ("original", "renamed", "swapped")


class MaskingConfig(Params):
    """The task, the masked arm's ratio and the budget (both arms share data and test prompts)."""

    mask: float = Field(0.67, gt=0, le=1, description="share of masked prompts in the masked arm")
    keyword: bool = Field(True, description="the query echoes the target's name")
    steps: int = Field(1500, ge=1)
    lr: float = Field(1e-3, gt=0)
    n_train: int = Field(20000, ge=1)
    seeds: int = Field(4, ge=2)


class FunctionMasking(Claim):
    """Masking function names in training holds up under renamed functions (Hammer, #26)."""

    id = "comp.function_masking"
    papers = (
        Ref(
            26,
            "Lin et al. 2024",
            "Hammer: robust function-calling for on-device language models via function masking",
        ),
    )
    statement = (
        "On function_calls (pick 1 of 3 listed functions, each a name and a 2-word description; "
        "the query holds 1 of the target's description words and echoes its name), a 2-layer "
        "transformer trained with 67% of the training prompts' names masked has a higher mean "
        "accuracy on test prompts with renamed and with swapped names than the same model trained "
        "on canonical names, by >= 0.05, and the canonical-name model's accuracy falls from "
        "canonical to renamed/swapped names by >= 0.05 (paired 95% CIs over seeds above 0). Not "
        "reproduced when either CI lies wholly below 0.05."
    )
    Config = MaskingConfig
    scope = "proxy"
    scope_note = (
        "Qwen2 / DeepSeek-Coder LLMs fine-tuned on xLAM function-calling data with names, "
        "parameter names and defaults masked, tested on benchmarks with other naming "
        "conventions, replaced by a 2-layer transformer trained from scratch to pick 1 of 3 "
        "single-token functions whose names echo the query, tested with renamed and swapped names"
    )
    to_decide = (
        "Arms that fit: final val is bimodal (eleven of twenty runs 0.95-1.0, six 0.65-0.79 at "
        "step 1,500): more steps or 8 seeds; and a negative control without the names' identity "
        "cue (its own came out reproduced)."
    )
    budgets = {"smoke": {"steps": 100, "n_train": 2000, "seeds": 2}, "full": {}}
    smoke_decides = False  # 2 seeds and 100 steps only check that the code runs
    GAP = 0.05  # fixed before running
    measures = {"val": Final("val/main")} | {s: Final(f"test/{s}") for s in SPLITS}
    fit = Fit("val", 0.9)
    floor = Floor("original", 0.45)  # chance is 1/3
    figure = ArmBars("swapped", by="names")
    controls = {
        "negative": Control(
            {"keyword": False},
            "not reproduced",
            "the query does not echo the "
            "target's name: no naming shortcut in the training data, so by the "
            "paper's logic plain training already reads the descriptions and "
            "masking buys nothing (its own runs)",
            budget="full",
            heavy=True,
            open="Measured Dec 3 2026 (full, 4 seeds): reproduced, masked - plain "
            "0.142 [0.053, 0.232], plain's fall 0.135 [0.056, 0.215]: names "
            "identify functions even without the echo, so plain training still "
            "leans on them; a negative control needs no name-identity cue",
        ),
        "positive": Control(
            {"mask": 1.0},
            "reproduced",
            "every training prompt masked: names "
            "never carry the answer in training, the strongest dose of the "
            "paper's remedy (its own masked runs; the plain runs are the "
            "claim's)",
            budget="full",
            heavy=True,
            open="Measured Dec 3 2026 (full, 4 seeds): inconclusive by the fit "
            "guard (val 0.857 plain, 0.814 masked < 0.9); gain 0.535 [0.307, "
            "0.763]: some seeds do not learn the matching in 1500 steps",
        ),
    }

    def arms(self, cfg: MaskingConfig):
        base = {
            "task": {
                "name": "function_calls",
                "params": {"keyword": cfg.keyword, "n_train": cfg.n_train},
            },
            "model": LM,
            "method": {"name": "erm"},
            "optimizer": {
                "name": "adamw",
                "lr": cfg.lr,
                "weight_decay": 0.0,
                "betas": [0.9, 0.999],
            },
            "steps": cfg.steps,
            "batch_size": 128,
            "checkpoint_every": cfg.steps,
            "eval": {"every": cfg.steps, "log_points": 0, "probes": [{"name": "accuracy"}]},
        }
        names = {"plain": {"task.params.mask": 0.0}, "masked": {"task.params.mask": cfg.mask}}
        return Design(base, axes={"names": names}, seeds=cfg.seeds).expand()

    def synthetic(self, cfg: MaskingConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: both arms 0.98 on canonical names; renamed/swapped 0.70/0.40 plain, 0.95/0.90
        masked; null: the masked arm as the plain one; unfit: the masked arm's val at 0.6."""
        plain = arm["names"] == "plain" or case == "null"
        out = {
            "original": 0.98,
            "renamed": 0.70 if plain else 0.95,
            "swapped": 0.40 if plain else 0.90,
        }
        out["val"] = 0.6 if case == "unfit" and arm["names"] == "masked" else 0.97
        return out

    def decide(self, cfg: MaskingConfig, table: pd.DataFrame) -> Decision:
        t = table.assign(perturbed=table[["renamed", "swapped"]].mean(axis=1))
        wide = t.pivot_table(index="seed", columns="names", values=[*SPLITS, "perturbed"])
        pert = wide["perturbed"]
        ivs = [
            Interval.of(
                "masked - plain, renamed/swapped",
                (pert["masked"] - pert["plain"]).dropna(),
                null=0.0,
                smallest=self.GAP,
            ),
            Interval.of(
                "plain: canonical - renamed/swapped",
                (wide["original"]["plain"] - pert["plain"]).dropna(),
                null=0.0,
                smallest=self.GAP,
            ),
        ]
        stats = {
            f"{a}_{s}": wide[s][a].mean()
            for s in (*SPLITS, "perturbed")
            for a in ("plain", "masked")
            if a in pert
        }
        arms = "; ".join(
            f"{a}: " + ", ".join(f"{s} {stats[f'{a}_{s}']:.3f}" for s in SPLITS)
            for a in ("plain", "masked")
            if a in pert
        )
        sentence = (
            f"Accuracy over {len(pert)} seeds (keyword {cfg.keyword}, mask {cfg.mask:g}): "
            f"{arms}; " + "; ".join(iv.text() for iv in ivs) + "."
        )
        return Decision(combine([iv.verdict() for iv in ivs]), stats, sentence, ivs)


register(FunctionMasking())
