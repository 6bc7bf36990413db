"""``comp.pretraining_inference`` (Porada, Sordoni & Cheung 2022, #68): pretraining on injected
premises does not teach the inferences they support — generalization to supported inferences does
not improve over pretraining, although the premises themselves are learnt.

``fact_corpus``: ``e IS c`` and ``c CAN p`` for every entity and category, ``e CAN p`` stated for
half the entities; of the rest, half keep their premise (``test/inference``: ``e CAN ?``, supported
by ``e IS c`` and ``c CAN p``) and half lose it (``test/control``: unsupported).

No official code found (searched GitHub code, issues and pages for the title and the authors'
repositories). Differences from the paper:

- the model and objective: a 2-layer causal transformer predicting the final slot instead of
  BERT's masked LM;
- the data regime: a templated corpus of facts only (no natural text around them), in which
  ``e CAN p`` is stated for half the entities (``stated``, our choice), so the rule
  ``e IS c, c CAN p => e CAN p`` is shown hundreds of times; the paper injects premises into the
  minibatches of pretraining on natural text, where no such share of instances is designed in.
  The advantage shrinks with that share (measured: docs/compositional.md); since the verdict
  turns on a share the paper does not have, the claim declares its data regime a
  ``reconstruction``: its decision (full: not reproduced, +0.516 [0.40, 0.63]) is a decision
  about that reading, not against the paper (until Dec 3 2026, issue #30, a reconstruction's
  "not reproduced" was recorded inconclusive);
- the measure: accuracy of the property slot, supported (premised entities) minus unsupported
  (entities whose premise was removed), judged at the end of training (curves over 10
  evaluations are drawn); the paper's claim is about how that generalization moves over the
  course of pretraining;
- the aggregation: the paired-seed 95% CI over 5 seeds of inference - control, within ±0.1.
"""

from __future__ import annotations

from typing import Literal

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.comp._common import TrainConfig, spec
from genlab.claims.guards import Fit, Interval, NotApplicable
from genlab.claims.measures import Final
from genlab.design import Design
from genlab.report.claim_figures import Curves

SPLITS = ("test/premise", "test/inference", "test/control")


class InferenceConfig(TrainConfig):
    stated: float = Field(0.5, gt=0, lt=1, description="entities whose 'e can p' is trained")
    property_of: Literal["category", "entity"] = Field(
        "category", description="what fixes an entity's property"
    )
    entities: int = Field(1000, ge=4, description="entities in the corpus")
    margin: float = Field(0.1, gt=0, description="largest inference - control called absent")


class PretrainingInference(Claim):
    """Injected premises are recalled but their inferences are not drawn (#68)."""

    id = "comp.pretraining_inference"
    papers = (
        Ref(
            68,
            "Porada, Sordoni & Cheung 2022",
            "Does pre-training induce systematic "
            "inference? How masked language models acquire commonsense knowledge",
        ),
    )
    scope = "reconstruction"
    scope_note = (
        "data regime: a facts-only corpus in which 'e CAN p' is stated for half the entities "
        "(genlab's choice; the paper injects premises into natural-text pretraining, with no "
        "designed share), and the decision moves with that share (0.1 and 0.05: inconclusive)"
    )
    statement = (
        "After pretraining on the fact corpus (premise recall >= 0.9), accuracy on inferences "
        "supported by injected premises exceeds that on unsupported controls by less than 0.1: "
        "the paired-seed 95% CI of inference - control lies within ±0.1."
    )
    Config = InferenceConfig
    budgets = {
        "smoke": {"steps": 1500, "batch_size": 128, "lr": 1e-3, "seeds": 5},
        "full": {"steps": 3000, "batch_size": 128, "lr": 1e-3, "seeds": 5},
    }
    measures = {
        "premise": Final("test/premise"),
        "inference": Final("test/inference"),
        "control": Final("test/control"),
    }
    fit = Fit("premise", 0.9)
    floor = NotApplicable(
        "floor",
        "an absence claim: inference at the control's level is the "
        "paper's result, not arms that cannot be told apart",
    )
    figure = Curves(SPLITS, logx=False)
    controls = {
        "negative": Control(
            {"stated": 0.9},
            "not reproduced",
            "'e can p' stated for 90% of the "
            "entities: the rule e -> c -> p is shown thousands of times and the "
            "model draws it for the premised entities",
            heavy=True,
        ),
        "positive": Control(
            {"property_of": "entity"},
            "reproduced",
            "properties drawn per entity: the premises support nothing, inference = control",
            heavy=True,
        ),
    }

    def arms(self, cfg: InferenceConfig):
        task = {"stated": cfg.stated, "property_of": cfg.property_of, "n_entities": cfg.entities}
        base = spec(
            cfg,
            "fact_corpus",
            task,
            "transformer",
            {"d_model": 64, "n_layers": 2, "n_heads": 4},
            evals=10,
        )
        return Design(base, seeds=cfg.seeds).expand()

    def synthetic(self, cfg: InferenceConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect (the stated absence): inference at the control's 0.1; null: inferences drawn,
        0.5; unfit: as effect, premise recall 0.5."""
        return {
            "premise": 0.5 if case == "unfit" else 1.0,
            "control": 0.1,
            "inference": 0.5 if case == "null" else 0.1,
        }

    def decide(self, cfg: InferenceConfig, table: pd.DataFrame) -> Decision:
        diff = (table["inference"] - table["control"]).dropna().tolist()
        iv = Interval.of("inference - control", diff, smallest=cfg.margin, absence=True)
        stats = {
            "premise": table["premise"].mean(),
            "inference": table["inference"].mean(),
            "control": table["control"].mean(),
            "advantage": iv.estimate,
        }
        sentence = (
            f"Premise recall {stats['premise']:.3f}, supported inferences "
            f"{stats['inference']:.3f}, unsupported controls {stats['control']:.3f}; "
            f"{iv.text()}."
        )
        return Decision(iv.verdict(), stats, sentence, [iv])


register(PretrainingInference())
