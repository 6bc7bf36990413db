"""The ``knowledge_base`` task (Wang et al., #91): answers are right, ID/OOD are disjoint, no OOD
inferred fact is trained on, the realisation depends on data_seed only, bad params are errors."""

from __future__ import annotations

import pytest
import torch

from genlab.errors import SpecError
from genlab.losses import IGNORE
from genlab.spec import parse_spec
from genlab.tasks import TASKS
from genlab.tasks.knowledge_base import EQUAL, GREATER, LESS

SMALL = {
    "composition": {"n_entities": 30, "n_relations": 8, "out_degree": 6, "phi": 3.0},
    "comparison": {"n_entities": 30, "n_attributes": 3, "n_values": 5, "phi": 3.0},
}


def build(reasoning: str, data_seed: int = 0, **kw):
    params = TASKS.params("knowledge_base", {"reasoning": reasoning, **SMALL[reasoning], **kw}, "t")
    return params, TASKS.get("knowledge_base").obj(params, data_seed)


def answers(split) -> torch.Tensor:
    """The scored answer of each row (layout "paper": position 1 for atomic facts, 2 for
    inferred ones; layout "last": the label)."""
    y = split.y
    if y.dim() == 1:
        return y
    return torch.where(y[:, 2] != IGNORE, y[:, 2], y[:, 1])


def atomic_table(data, p) -> dict[tuple[int, int], int]:
    tr = data.train["main"]
    atom = ~tr.meta["inferred"]
    ys = answers(tr)[atom]
    return {(int(a), int(b)): int(y) for (a, b, _), y in zip(tr.x[atom], ys, strict=True)}


def ood_keys(data) -> set[tuple[int, int]]:
    tr = data.train["main"]
    rows = ~tr.meta["inferred"] & tr.meta["ood"]
    return {(int(a), int(b)) for a, b, _ in tr.x[rows]}


@pytest.mark.parametrize("layout", ["paper", "last"])
def test_composition_answers_and_splits(layout) -> None:
    p, data = build("composition", layout=layout)
    e = p.n_entities
    table, ood = atomic_table(data, p), ood_keys(data)
    assert len(table) == e * p.out_degree
    assert data.info.kind == ("sequence" if layout == "paper" else "classification")
    fill = e + p.n_relations
    tr = data.train["main"]
    assert (tr.x[~tr.meta["inferred"], 2] == fill).all()
    for name, split in [("train", tr), ("id", data.test["id"]), ("ood", data.test["ood"])]:
        inferred = split.meta["inferred"] if name == "train" else torch.ones(len(split), dtype=bool)
        ys = answers(split)[inferred]
        for (h, r1, r2), t in zip(split.x[inferred].tolist(), ys.tolist(), strict=True):
            b = table[(h, r1)]
            assert table[(b, r2)] == t
            hops_ood = ((h, r1) in ood, (b, r2) in ood)
            assert hops_ood == ((True, True) if name == "ood" else (False, False))
    n_id_atomic = len(table) - len(ood)
    assert int(tr.meta["inferred"].sum()) == round(p.phi * n_id_atomic)
    keys = {tuple(r) for r in tr.x[tr.meta["inferred"]].tolist()}
    assert not keys & {tuple(r) for r in data.test["id"].x.tolist()}
    assert not keys & {tuple(r) for r in data.test["ood"].x.tolist()}


def test_comparison_answers_and_splits() -> None:
    p, data = build("comparison")
    table = atomic_table(data, p)
    ood = ood_keys(data)
    e, nv = p.n_entities, p.n_values
    tr = data.train["main"]
    sign = {LESS: lambda a, b: a < b, EQUAL: lambda a, b: a == b, GREATER: lambda a, b: a > b}
    for name, split in [("train", tr), ("id", data.test["id"]), ("ood", data.test["ood"])]:
        inferred = split.meta["inferred"] if name == "train" else torch.ones(len(split), dtype=bool)
        for (a, e1, e2), lab in zip(
            split.x[inferred].tolist(), answers(split)[inferred].tolist(), strict=True
        ):
            assert e1 != e2 and a >= e and lab >= nv
            assert sign[lab - nv](table[(e1, a)], table[(e2, a)])
            both = ((e1, a) in ood, (e2, a) in ood)
            assert both == ((True, True) if name == "ood" else (False, False))
    assert data.info.n_outputs == nv + 3
    keys = {tuple(r) for r in tr.x[tr.meta["inferred"]].tolist()}
    assert not keys & {tuple(r) for r in data.test["id"].x.tolist()}


@pytest.mark.parametrize("reasoning", ["composition", "comparison"])
def test_depends_only_on_data_seed(reasoning) -> None:
    _, a = build(reasoning, 3)
    _, b = build(reasoning, 3)
    _, c = build(reasoning, 4)
    for k, s in a.splits().items():
        assert torch.equal(s.x, b.splits()[k].x) and torch.equal(s.y, b.splits()[k].y)
    assert not torch.equal(a.train["main"].x, c.train["main"].x)


def spec(**task):
    return parse_spec(
        {
            "task": {"name": "knowledge_base", "params": task},
            "model": {"name": "transformer", "params": {"d_model": 8, "n_layers": 1, "n_heads": 2}},
            "steps": 1,
        }
    )


@pytest.mark.parametrize(
    "task, match",
    [
        ({"reasoning": "composition", "out_degree": 30, "n_relations": 20}, "out_degree"),
        ({"reasoning": "comparison", "n_entities": 10, "ood_fraction": 0.1}, "ood_fraction"),
        (
            {"reasoning": "composition", "n_entities": 10, "out_degree": 5, "n_relations": 5},
            "OOD atomic",
        ),
        ({"reasoning": "deduction"}, "reasoning"),
        ({"phi": 0}, "phi"),
        ({"layout": "middle"}, "layout"),
        ({"reasoning": "comparison", "n_entities": 5000}, "n_entities"),
    ],
)
def test_bad_params_are_spec_errors(task, match) -> None:
    with pytest.raises(SpecError, match=match):
        spec(**task)


def test_phi_too_large_for_the_knowledge_base() -> None:
    with pytest.raises(SpecError, match="phi"):
        build("composition", phi=50.0)
