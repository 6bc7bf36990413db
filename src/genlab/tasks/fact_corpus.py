"""A templated fact corpus: "e is a c", "c can p", and "e can p" stated for only some entities.

After Porada et al., "Does Pre-training Induce Systematic Inference? How Masked Language Models
Acquire Commonsense Knowledge" (NAACL 2022, catalogue #68): verbalised premises are injected into
pretraining, and the question is whether the model comes to infer what they support. Every entity
belongs to a category and every category has a property. Training sentences: ``e IS c`` for every
entity, ``c CAN p`` for every category, and ``e CAN p`` for the ``stated`` share of entities (so
the template itself is learnt). Of the other entities, ``premised`` keep their premise ``e IS c``;
for the rest (the controls) it is removed, so ``e CAN ?`` is not derivable for them.

Splits (answers are the masked last slot, read at the last position of ``[subject, relation]``):
``test/premise`` (``e IS ?`` for premised entities: recall of a trained premise),
``test/inference`` (``e CAN ?`` for premised entities: supported by their premises, never stated),
``test/control`` (``e CAN ?`` for control entities: chance unless the model guesses by frequency).
The paper's claim is that inference does not rise over training above the control while premise
recall does. ``property_of="entity"`` draws every entity's property on its own instead of from its
category (the ``c CAN p`` facts stay, unrelated): then nothing supports the inference, a control. A masked LM reduces here to predicting the final slot, which a causal transformer
reads at the last position; that is the deviation from BERT-style pretraining.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.tasks import TASKS


class FactParams(Params):
    """Params of ``fact_corpus``."""

    n_entities: int = Field(400, ge=4)
    n_categories: int = Field(20, ge=2)
    n_properties: int = Field(10, ge=2)
    stated: float = Field(0.5, gt=0, lt=1, description="entities whose 'e can p' is trained")
    premised: float = Field(0.5, gt=0, lt=1, description="of the others: keep 'e is c'")
    repeat: int = Field(4, ge=1, description="copies of each training sentence")
    property_of: Literal["category", "entity"] = Field(
        "category", description="an entity's property: its category's, or drawn on its own"
    )

    @model_validator(mode="after")
    def _check(self) -> FactParams:
        held = round(self.n_entities * (1 - self.stated))
        if held < 2 or round(held * self.premised) < 1 or held - round(held * self.premised) < 1:
            raise ValueError("stated/premised leave no inference or no control entities")
        return self


@TASKS.register(
    "fact_corpus",
    FactParams,
    papers=(68,),
    family="compositional",
    tiny={"n_entities": 100, "repeat": 2},
)
def fact_corpus(params: FactParams, data_seed: int) -> TaskData:
    """Templated facts with injected premises; probe unsupported inferences (Porada et al., #68)."""
    rng = np.random.default_rng(data_seed)
    e, c, p = params.n_entities, params.n_categories, params.n_properties
    category = rng.integers(0, c, e)
    prop = rng.integers(0, p, c)
    own = prop[category] if params.property_of == "category" else rng.integers(0, p, e)
    ent0, cat0 = 0, e
    is_tok, can_tok = e + c, e + c + 1  # answers: categories 0..c-1, then properties c..c+p-1
    order = rng.permutation(e)
    n_stated = round(e * params.stated)
    stated, held = order[:n_stated], order[n_stated:]
    n_prem = round(len(held) * params.premised)
    premised, control = held[:n_prem], held[n_prem:]

    def rows(subj: np.ndarray, rel: int, ans: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.stack([subj, np.full(len(subj), rel)], 1), ans

    with_premise = np.concatenate([stated, premised])
    parts = [
        rows(ent0 + with_premise, is_tok, category[with_premise]),
        rows(cat0 + np.arange(c), can_tok, c + prop),
        rows(ent0 + stated, can_tok, c + own[stated]),
    ]
    x = np.concatenate([a for a, _ in parts]).repeat(params.repeat, 0)
    y = np.concatenate([b for _, b in parts]).repeat(params.repeat, 0)

    def split(subj, rel, ans, meta):  # noqa: ANN001, ANN202
        a, b = rows(ent0 + subj, rel, ans)
        return Split(torch.tensor(a), torch.tensor(b), meta)

    test = {
        "premise": split(premised, is_tok, category[premised], {"shift": "premise"}),
        "inference": split(premised, can_tok, c + own[premised], {"shift": "inference"}),
        "control": split(control, can_tok, c + own[control], {"shift": "control"}),
    }
    info = TaskInfo(
        kind="classification",
        n_outputs=c + p,
        vocab_size=e + c + 2,
        seq_len=2,
        chance=1 / p,
        extra={"n_categories": c, "n_properties": p},
    )
    return TaskData({"main": Split(torch.tensor(x), torch.tensor(y), {})}, {}, test, info)
