"""``lora.knowledge_subtraction`` (Bagherifard et al. 2025, #89): subtracting a general-knowledge
LoRA from each task LoRA before Arrow routing improves zero-shot accuracy on held-out tasks.

Protocol (catalogue row 89, scaled to CPU): the ``domain_family`` tasks (each upstream task on its
own input domain; every task's read-out shares a general component ``G`` of a shared input subspace
that the base lacks); a linear base pretrained on the base data; a rank-4 LoRA (PEFT) on the
general data (inputs of every domain, read-out ``W0 + G``) and one per upstream task (8), all from
the base with a shared ``A`` init; 16 held-out tasks, each blending two upstream domains.
Zero-shot: nothing is trained on the held-out tasks. Paired over held-out tasks x family seeds.

The paper's operation through PEFT's own implementation, Dec 3 2026 (issue #31; the earlier
results were known, and, before this design was frozen, three held-out tasks of family 0 were
scored by the agreement check below: Arrow 0.555-0.613, GenKnowSub 0.456-0.498): both compared arms
are PEFT 0.21's Arrow router (``peft.tuners.lora.arrow``, built as ``create_arrow_model`` builds it,
``derived/arrow_library.peft_router``) on the base the LoRAs were trained from, top-2 per input,
temperature 1: ``arrow`` routes the task LoRAs; ``genknowsub`` first subtracts the general LoRA's
``A`` and ``B`` from each task LoRA's factors (``ArrowConfig(use_gks=True)``, as the official code,
``saharsamr/Modular-LLM``, ``merging_lora_modules/cross_lingual_expert_organiser.py``, does), and the
general LoRA takes no part in the forward (the code deletes it). Before: genlab's own forward hooks,
an exact weight-delta subtraction and a "backbone" (base + the general LoRA) under both arms.
Reported beside: the base and the base with the general LoRA (``general``).

Agreement of the hooks with PEFT (measured on the full budget's 5 libraries x 16 held-out tasks,
issue #31): Arrow without subtraction agrees on 99.98% of test predictions (min 99.7% per task;
PEFT's 15 power iterations from its seeded start give the exact SVD's prototypes, |cos| >= 0.9999);
with the factor-wise subtraction, hooks (exact SVD of the residual) and PEFT (15 power iterations)
agree on 99.66% (min 96.6%; prototype |cos| mean 0.9998, min 0.993). PEFT serves genlab's small models (its
Arrow layers need only ``nn.Linear`` targets), so the claim runs PEFT; the hooks stay in the library
for the agreement test (``tests/test_arrow.py``) only.

Remaining differences: the paper's pretrained LLM (Phi-3) already holds the general knowledge; the
base here lacks ``G``, so deleting the general LoRA leaves no ``G`` in the model. Held-out tasks
that need ``G`` then lose it under GenKnowSub: the design tests the paper's operation on a model
that does not meet its premise, and says so. The positive control (held-out tasks that need no
``G`` beyond the base, ``heldout_shared=0``) is the family that meets it: there the general
knowledge in the task LoRAs is only duplicated, and subtracting it must help.

Negative control (``shared=0``, ``heldout_shared=2``): the upstream tasks lack ``G``, so their LoRAs
carry none and nothing is duplicated; subtracting the general LoRA's factors can only distort them.

Measured, Dec 3 2026 (issue #31, stores ``genlab-runs/issue31-lora{,-smoke}``): the judge says "not
reproduced" at full (GenKnowSub 0.507 vs Arrow 0.616, -0.109 [-0.122, -0.096], n=80; smoke -0.111
[-0.125, -0.096], n=16), recorded "inconclusive" because both controls came out the other way (their
``open`` texts). Why the negative control gains: the residual of the factor-wise subtraction is
``(B_i - B_g)(A_i - A_g) = (B_i - B_g)(ΔA_i - ΔA_g)`` (the shared ``A`` init cancels), which holds
``+B_g ΔA_g``, part of the general LoRA's own update with a plus sign: where the base lacks ``G`` and
the held-out tasks need it, the paper's operation puts some of ``G`` back rather than taking it out.
Neither control is redesigned after its result; a valid positive design for this proxy is open.
"""

from __future__ import annotations

from typing import Literal

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.guards import Fit, Floor, Interval
from genlab.claims.measures import Final
from genlab.derived.arrow_library import ArrowLibraryParams, library_specs
from genlab.design import Arm, Design
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars
from genlab.spec import load_spec_file, parse_spec
from genlab.tasks.domain_family import DomainFamilyParams

MODES = {
    "base": {"method.mode": "base"},
    "general": {"method.mode": "general"},
    "arrow": {"method.mode": "peft_arrow"},
    "genknowsub": {"method.mode": "peft_genknowsub"},
}  # PEFT's Arrow / GenKnowSub


class SubtractionConfig(Params):
    """Family seeds, held-out tasks, the family's general component and Arrow's knobs."""

    families: list[int] = Field([0, 1, 2, 3, 4], min_length=1, description="family seeds")
    n_heldout: int = Field(16, ge=1, le=64)
    shared: float = Field(2.0, ge=0, description="the tasks' general component (0: none)")
    general: Literal["shared", "disjoint"] = "shared"
    general_scale: float = Field(2.0, ge=0, description="the general data's component")
    heldout_shared: float | None = Field(
        None, ge=0, description="G in held-out tasks (None: shared)"
    )
    top_k: int = Field(2, ge=1)


class KnowledgeSubtraction(Claim):
    """GenKnowSub + Arrow beats Arrow on held-out tasks (Bagherifard et al., #89)."""

    id = "lora.knowledge_subtraction"
    papers = (
        Ref(
            89,
            "Bagherifard, Rajabi, Edalat & Yaghoobzadeh 2025",
            "GenKnowSub: improving "
            "modularity and reusability of LLMs through general knowledge subtraction",
        ),
    )
    statement = (
        "On held-out tasks, zero-shot, PEFT's Arrow routing (top 2) over the task LoRAs after "
        "GenKnowSub (the general LoRA's A and B subtracted from each task LoRA's, the general "
        "LoRA deleted) is more accurate than PEFT's Arrow over the task LoRAs, both on the base "
        "the LoRAs were trained from: the paired difference over held-out tasks x families has "
        "its 95% CI above 0 and an estimate >= 0.02 (not reproduced when the CI lies below 0.02)."
    )
    Config = SubtractionConfig
    scope = "proxy"
    scope_note = (
        "The paper subtracts a general-knowledge LoRA from task LoRAs of Phi-3 (and Phi-2) "
        "and routes them with Arrow on language tasks; here PEFT's Arrow / GenKnowSub over "
        "rank-4 LoRAs of a tiny linear model on the synthetic domain_family, whose base "
        "lacks the general component that the paper's LLM already holds."
    )
    budgets = {"smoke": {"families": [0]}, "full": {}}
    SMALLEST = 0.02
    measures = {"test": Final("test/heldout"), "train": Final("train/main")}
    replicates = ("seed", "data_seed", "family", "task")
    fit = Fit("train", 0.9, where={"mode": ("library",)})  # the base and its LoRAs fit their data
    floor = Floor("test", 0.3)  # 8 classes; the most frequent class holds up to ~0.3
    figure = ArmBars("test", by="mode")
    controls = {
        "negative": Control(
            {"shared": 0.0, "heldout_shared": 2.0},
            "not reproduced",
            "Bagherifard et al.: subtraction helps by removing the general knowledge the task "
            "modules carry beside the model that already holds it; here the upstream tasks lack "
            "G, so their LoRAs carry none: nothing is duplicated, and subtracting the general "
            "LoRA's factors can only distort the task modules. Under the old design (hooks, "
            "backbone with the general LoRA, exact subtraction) measured not reproduced at full "
            "and at smoke (-0.512 [-0.541, -0.483], 15 s)",
            slow=True,
            open="Dec 3 2026, the paper's operation through PEFT (issue #31), smoke (the control's "
            "budget), 65 runs: reproduced, GenKnowSub 0.518 vs Arrow 0.369, +0.148 [0.115, 0.181] "
            "(n=16; base 0.216, base + general 0.470): the factor-wise residual holds +B_g dA_g, "
            "part of the general update, which the held-out tasks need and the base lacks",
        ),
        "positive": Control(
            {"heldout_shared": 0.0},
            "reproduced",
            "held-out tasks that need no G beyond the base (upstream tasks keep G): the base "
            "holds all the general knowledge they need, as the paper's LLM does, and the task "
            "LoRAs' G is only duplicated, so by the paper's account subtracting it must help",
            slow=True,
            open="Dec 3 2026 (issue #31), smoke, 65 runs: not reproduced, GenKnowSub 0.207 vs "
            "Arrow 0.220, -0.013 [-0.025, -0.002] (n=16), every routing arm near the base (0.198, "
            "base + general 0.153; the floor guard passes on the library's own arms): the "
            "held-out tasks' skills are not recovered by either routing, so this family does not "
            "show whether subtraction helps",
        ),
    }

    def family_params(self, cfg: SubtractionConfig, seed: int) -> dict:
        return {
            "n_heldout": cfg.n_heldout,
            "shared": cfg.shared,
            "general": cfg.general,
            "general_scale": cfg.general_scale,
            "heldout_shared": cfg.heldout_shared,
            "family_seed": seed,
        }

    def library(self, cfg: SubtractionConfig, seed: int) -> list[Arm]:
        """The base and its LoRAs as arms (the ``arrow_library`` model reuses these runs)."""
        fam = DomainFamilyParams(**self.family_params(cfg, seed)).model_dump(
            exclude={"task", "train_size", "test_size"}
        )
        base_d, lora_ds = library_specs(ArrowLibraryParams(), fam)
        base = parse_spec(base_d)
        arms = [
            Arm({"mode": "library", "family": seed, "task": -2, "seed": 0, "data_seed": 0}, base)
        ]
        for d in lora_ds:
            d["model"] = {"name": "from_run", "params": {"run": base.run_id}}
            t = d["task"]["params"]["task"]
            arms.append(
                Arm(
                    {"mode": "library", "family": seed, "task": t, "seed": 0, "data_seed": 0},
                    parse_spec(d),
                )
            )
        return arms

    def arms(self, cfg: SubtractionConfig) -> list[Arm]:
        out: list[Arm] = []
        for seed in cfg.families:
            out += self.library(cfg, seed)
            base = load_spec_file("lora-arrow")
            base["task"]["params"].update(self.family_params(cfg, seed))
            base["method"]["params"]["top_k"] = cfg.top_k
            axes = {
                "mode": MODES,
                "task": {t: {"task.task": t} for t in range(8, 8 + cfg.n_heldout)},
            }
            for a in Design(base, axes=axes).expand():
                out.append(Arm({**a.labels, "family": seed}, a.spec))
        return out

    def synthetic(self, cfg: SubtractionConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: GenKnowSub 0.64 against Arrow 0.52-0.53; null: GenKnowSub at Arrow's 0.52;
        unfit: the library's runs fit their data only to 0.6."""
        if arm["mode"] == "library":
            return {"test": 0.9, "train": 0.6 if case == "unfit" else 0.95}
        test = {
            "base": 0.2,
            "general": 0.45,
            "arrow": 0.52 + 0.01 * (arm["task"] % 2),
            "genknowsub": 0.52 if case == "null" else 0.64,
        }[arm["mode"]]
        return {"test": test, "train": 0.5}

    def decide(self, cfg: SubtractionConfig, table: pd.DataFrame) -> Decision:
        rows = table[table["mode"] != "library"]
        acc = rows.pivot_table(index=["family", "task"], columns="mode", values="test")
        iv = Interval.of(
            "genknowsub - arrow",
            (acc["genknowsub"] - acc["arrow"]).tolist(),
            null=0.0,
            smallest=self.SMALLEST,
        )
        stats = {f"test_{m}": float(acc[m].mean()) for m in acc.columns}
        stats["diff_arrow"] = iv.estimate
        sentence = (
            f"Held-out test accuracy over {len(acc)} task(s) x family seed(s), PEFT's "
            f"Arrow (top {cfg.top_k}): genknowsub {stats['test_genknowsub']:.3f}, arrow "
            f"{stats['test_arrow']:.3f} ({iv.text()}); beside: base "
            f"{stats['test_base']:.3f}, base + general LoRA {stats['test_general']:.3f}."
        )
        return Decision(iv.verdict(), stats, sentence, (iv,))


register(KnowledgeSubtraction())
