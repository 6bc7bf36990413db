"""A synthetic knowledge base of atomic and inferred facts, after Wang et al., "Grokked Transformers
are Implicit Reasoners" (NeurIPS 2024, catalogue #91), scaled down.

Two reasonings (``reasoning``):

- ``composition``: every entity has ``out_degree`` outgoing relations (drawn without replacement
  from ``n_relations``), each to a uniformly random tail: atomic facts ``(h, r) -> t``. Inferred
  facts are the 2-hop compositions ``(h, r1, r2) -> t`` with ``(h, r1) -> b`` and ``(b, r2) -> t``.
- ``comparison``: every entity has a value in ``[0, n_values)`` for each of ``n_attributes``
  attributes: atomic facts ``(e, a) -> v``. Inferred facts compare two distinct entities on one
  attribute: ``(a, e1, e2) -> <, = or >``.

ID / OOD split, as in the authors' released data generators (OSU-NLP-Group/GrokkedTransformer):
for composition, a random ``ood_fraction`` of the *atomic facts* is OOD (the paper uses 5%); an
inferred fact is ID when both its hops are ID atomic facts, OOD when both are OOD, and dropped when
mixed. For comparison, per attribute a random ``ood_fraction`` of the *entities* is OOD (the paper
uses 10%); a pair of two ID entities is ID, two OOD entities OOD, mixed pairs are dropped. All
atomic facts (ID and OOD) are trained on; no OOD inferred fact is. Training = all atomic facts plus
``round(phi * #ID atomic facts)`` ID inferred facts drawn at random (``phi`` is the paper's
inferred/atomic ratio; it uses 3.6-18); ``test/id`` is up to ``test_size`` of the remaining ID
inferred facts, ``test/ood`` up to ``test_size`` OOD inferred facts. Differences from the paper:
no ``<q>``/``<mask>`` tokens, and the paper's 2000 entities / 200 relations (composition) and 1000
entities / 20 attributes (comparison) shrink to the defaults below.

Token layout (``layout``). Tokens: entities ``0..E-1``, then relations (or attributes), then one
filler token. Every fact is a sequence of length 3 so atomic and inferred facts share one
``seq_len``: atomic facts are ``[h, r, FILL]`` (``[e, a, FILL]``), composition ``[h, r1, r2]``,
comparison ``[a, e1, e2]``. With ``layout="paper"`` (default) the task is of kind ``sequence``: the
answer is scored right after the query, as the paper's next-token training does, i.e. atomic facts
at position 1 (the relation) and inferred facts at position 2; other positions are ignored. With
``layout="last"`` the task is a ``classification`` read at the last position (the filler for
atomic facts). Outputs: composition, the ``E`` entities; comparison, the ``n_values`` values then
``<``, ``=``, ``>`` (indices ``n_values + 0/1/2``).

The realisation depends only on ``data_seed``. The train split's ``meta`` holds per-row tensors
``inferred`` (bool) and ``ood`` (bool: an OOD atomic fact, composition; an atomic fact of an entity
OOD for that attribute, comparison), which the tests use.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.errors import SpecError
from genlab.losses import IGNORE
from genlab.registry import Params
from genlab.tasks import TASKS

LESS, EQUAL, GREATER = 0, 1, 2
MAX_INFERRED = 20_000_000  # inferred facts enumerated in memory


class KnowledgeBaseParams(Params):
    """Params of ``knowledge_base``."""

    reasoning: Literal["composition", "comparison"] = Field(
        "composition", description="2-hop composition or attribute comparison"
    )
    n_entities: int = Field(200, ge=4, le=20000, description="entities")
    n_relations: int = Field(20, ge=1, le=2000, description="relations (composition)")
    out_degree: int = Field(10, ge=1, description="outgoing relations per entity (composition)")
    n_attributes: int = Field(5, ge=1, le=200, description="attributes (comparison)")
    n_values: int = Field(20, ge=2, le=1000, description="values per attribute (comparison)")
    ood_fraction: float = Field(
        0.1, gt=0, lt=0.5, description="OOD share of atomic facts (composition) or entities"
    )
    phi: float = Field(7.2, gt=0, description="trained inferred facts per ID atomic fact")
    test_size: int = Field(1000, ge=1, description="most facts in each test split")
    layout: Literal["paper", "last"] = Field(
        "paper", description="answer right after the query (sequence) or at the last position"
    )

    @model_validator(mode="after")
    def _sizes(self) -> KnowledgeBaseParams:
        if self.reasoning == "composition" and self.out_degree > self.n_relations:
            raise ValueError(
                f"out_degree ({self.out_degree}) must be <= n_relations ({self.n_relations})"
            )
        if self.reasoning == "comparison" and round(self.ood_fraction * self.n_entities) < 2:
            raise ValueError(
                f"ood_fraction * n_entities must give >= 2 OOD entities for an OOD pair; "
                f"got {self.ood_fraction} * {self.n_entities}: raise n_entities or ood_fraction"
            )
        n_inferred = (
            self.n_entities * self.out_degree**2
            if self.reasoning == "composition"
            else self.n_entities * (self.n_entities - 1) * self.n_attributes
        )
        if n_inferred > MAX_INFERRED:
            raise ValueError(
                f"n_entities={self.n_entities} gives {n_inferred} inferred facts, more than "
                f"{MAX_INFERRED} held in memory; lower n_entities (or out_degree / n_attributes)"
            )
        if self.reasoning == "composition":
            n_ood = round(self.ood_fraction * self.n_entities * self.out_degree)
            if n_ood < 10:
                raise ValueError(
                    f"ood_fraction * n_entities * out_degree must give >= 10 OOD atomic facts, "
                    f"got {n_ood}: raise n_entities, out_degree or ood_fraction"
                )
        return self


def _composition(p: KnowledgeBaseParams, rng: np.random.Generator) -> dict[str, np.ndarray]:
    e, d = p.n_entities, p.out_degree
    rels = np.argsort(rng.random((e, p.n_relations)), axis=1)[:, :d]  # d distinct per head
    heads = np.repeat(np.arange(e), d)
    rel, tail = rels.reshape(-1), rng.integers(0, e, size=e * d)
    n_atomic = e * d
    ood = np.zeros(n_atomic, dtype=bool)
    ood[rng.choice(n_atomic, round(p.ood_fraction * n_atomic), replace=False)] = True
    # facts of head h are rows h*d .. h*d+d-1: compose fact i with every fact of its tail
    first = np.repeat(np.arange(n_atomic), d)
    second = (tail[first] * d) + np.tile(np.arange(d), n_atomic)
    inf_x = np.stack([heads[first], e + rel[first], e + rel[second]], axis=1)
    inf_y = tail[second]
    atom_x = np.stack([heads, e + rel, np.full(n_atomic, e + p.n_relations)], axis=1)
    return {
        "atom_x": atom_x,
        "atom_y": tail,
        "atom_ood": ood,
        "inf_x": inf_x,
        "inf_y": inf_y,
        "inf_id": ~ood[first] & ~ood[second],
        "inf_ood": ood[first] & ood[second],
    }


def _comparison(p: KnowledgeBaseParams, rng: np.random.Generator) -> dict[str, np.ndarray]:
    e, na = p.n_entities, p.n_attributes
    values = rng.integers(0, p.n_values, size=(e, na))
    ood_ent = np.zeros((e, na), dtype=bool)
    for a in range(na):  # per attribute, as in the paper's generator
        ood_ent[rng.choice(e, round(p.ood_fraction * e), replace=False), a] = True
    ent, att = np.meshgrid(np.arange(e), np.arange(na), indexing="ij")
    ent, att = ent.reshape(-1), att.reshape(-1)
    atom_x = np.stack([ent, e + att, np.full(e * na, e + na)], axis=1)
    e1, e2 = np.meshgrid(np.arange(e), np.arange(e), indexing="ij")
    keep = e1 != e2
    e1, e2 = e1[keep], e2[keep]
    e1, e2, a = np.repeat(e1, na), np.repeat(e2, na), np.tile(np.arange(na), len(e1))
    v1, v2 = values[e1, a], values[e2, a]
    label = np.where(v1 < v2, LESS, np.where(v1 == v2, EQUAL, GREATER))
    return {
        "atom_x": atom_x,
        "atom_y": values[ent, att],
        "atom_ood": ood_ent[ent, att],
        "inf_x": np.stack([e + a, e1, e2], axis=1),
        "inf_y": p.n_values + label,
        "inf_id": ~ood_ent[e1, a] & ~ood_ent[e2, a],
        "inf_ood": ood_ent[e1, a] & ood_ent[e2, a],
    }


def _targets(y: np.ndarray, pos: int, layout: str) -> torch.Tensor:
    t = torch.as_tensor(y, dtype=torch.long)
    if layout == "last":
        return t
    out = torch.full((len(t), 3), IGNORE, dtype=torch.long)
    out[:, pos] = t
    return out


@TASKS.register(
    "knowledge_base",
    KnowledgeBaseParams,
    papers=(91,),
    family="grokking",
    tiny={"n_entities": 40, "n_relations": 4, "out_degree": 3, "phi": 2.0, "test_size": 50},
)
def knowledge_base(params: KnowledgeBaseParams, data_seed: int) -> TaskData:
    """Atomic and inferred facts of a random knowledge base, ID/OOD split (Wang et al., #91)."""
    rng = np.random.default_rng(data_seed)
    kb = (
        _composition(params, rng) if params.reasoning == "composition" else _comparison(params, rng)
    )
    id_rows = rng.permutation(np.flatnonzero(kb["inf_id"]))
    ood_rows = rng.permutation(np.flatnonzero(kb["inf_ood"]))
    n_id_atomic = int((~kb["atom_ood"]).sum())
    n_train = round(params.phi * n_id_atomic)
    if n_train >= len(id_rows):
        raise SpecError(
            f"task.params.phi={params.phi} asks for {n_train} trained inferred facts, but the "
            f"knowledge base has only {len(id_rows)} ID inferred facts (and needs some held out "
            f"for test/id); lower phi below {len(id_rows) / n_id_atomic:.2f} or enlarge the KB"
        )
    if len(ood_rows) == 0:
        raise SpecError(
            "task.params.ood_fraction: the knowledge base has no OOD inferred facts; raise "
            "ood_fraction or n_entities"
        )
    tr, te = id_rows[:n_train], id_rows[n_train : n_train + params.test_size]
    ood = ood_rows[: params.test_size]
    lay = params.layout
    x_train = np.concatenate([kb["atom_x"], kb["inf_x"][tr]])
    y_train = torch.cat([_targets(kb["atom_y"], 1, lay), _targets(kb["inf_y"][tr], 2, lay)])
    n_atom = len(kb["atom_x"])
    meta = {"reasoning": params.reasoning, "phi": params.phi}
    train_meta = meta | {
        "inferred": torch.arange(len(x_train)) >= n_atom,
        "ood": torch.cat([torch.as_tensor(kb["atom_ood"]), torch.zeros(len(tr), dtype=bool)]),
    }
    if params.reasoning == "composition":
        n_out, vocab = params.n_entities, params.n_entities + params.n_relations + 1
    else:
        n_out, vocab = params.n_values + 3, params.n_entities + params.n_attributes + 1

    def split(rows: np.ndarray) -> Split:
        x = torch.as_tensor(kb["inf_x"][rows], dtype=torch.long)
        return Split(x, _targets(kb["inf_y"][rows], 2, lay), dict(meta))

    return TaskData(
        train={"main": Split(torch.as_tensor(x_train, dtype=torch.long), y_train, train_meta)},
        val={},
        test={"id": split(te), "ood": split(ood)},
        info=TaskInfo(
            kind="sequence" if lay == "paper" else "classification",
            n_outputs=n_out,
            vocab_size=vocab,
            seq_len=3,
            chance=1.0 / n_out,
            extra={"n_atomic": n_atom, "n_train_inferred": len(tr)},
        ),
    )
