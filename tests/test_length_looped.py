"""Task ``computation_graph`` and model ``looped_transformer`` (Altabaa et al., #58): program
values and depths, loops, causality, weight tying. The claim ``length.looped_depth`` is judged in
``test_length_family_claims.py``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from genlab.claims import CLAIMS
from genlab.engine.train import prepare
from genlab.errors import SpecError
from genlab.losses import IGNORE
from genlab.models import MODELS
from genlab.spec import load_run_spec, parse_spec, preset_description
from genlab.tasks import TASKS
from genlab.tasks.computation_graph import EQ, FIRST_OP, FIRST_VALUE, OPS

CLAIM = CLAIMS.get("length.looped_depth").obj
OP_OF = {FIRST_OP + i: o for o, i in OPS.items()}


def build(seed: int = 0, **params):  # noqa: ANN201
    entry = TASKS.get("computation_graph")
    base = {"train_length": 3, "test_max": 6, "n_train": 60, "n_val": 10, "n_test": 10}
    return entry.obj(entry.params(**{**base, **params}), seed)


def evaluate(x: list[int], p: int) -> tuple[dict[int, int], dict[int, int], list[tuple]]:
    """Interpret a token program independently of the generator: values, depths, and
    (position, name) of every definition."""
    x = [t for t in x if t != 0]
    value: dict[int, int] = {}
    depth: dict[int, int] = {}
    defs = []
    i = 0
    while i < len(x):
        j = x.index(EQ, i)
        body, name = x[i:j], x[j + 1]
        assert name >= FIRST_VALUE + p and name not in value, "names are defined once"
        if len(body) == 1:
            value[name], depth[name] = body[0] - FIRST_VALUE, 0
        else:
            u, op, w = body
            assert u in value and w in value, "operands are defined before use"
            a, b = value[u], value[w]
            r = {"+": a + b, "-": a - b, "*": a * b}[OP_OF[op]]
            value[name], depth[name] = r % p, 1 + max(depth[u], depth[w])
        defs.append((j + 1, name))
        i = j + 2
    return value, depth, defs


@pytest.mark.parametrize("p", [23, 7])
def test_every_scored_value_is_the_programs_value_mod_p_and_depth_is_right(p) -> None:
    data = build(p=p, width=2, n_leaves=3)
    for split in data.splits().values():
        for x, y in zip(split.x.tolist(), split.y.tolist(), strict=True):
            value, depth, defs = evaluate(x, p)
            scored = [i for i, t in enumerate(y) if t != IGNORE]
            assert scored == [pos for pos, _ in defs]  # every variable, at its name
            for pos, var in defs:
                assert y[pos] - FIRST_VALUE == value[var]
            assert len(defs) == 3 + 2 * max(depth.values())  # bounded graph size
            if "length" in split.meta:
                assert max(depth.values()) == split.meta["length"] > 3
            else:
                assert 1 <= max(depth.values()) <= 3


def test_info_and_determinism() -> None:
    a, b, c = build(seed=1), build(seed=1), build(seed=2)
    assert torch.equal(a.train["main"].x, b.train["main"].x)
    assert torch.equal(a.test["len_006"].y, b.test["len_006"].y)
    assert not torch.equal(a.train["main"].x[:5], c.train["main"].x[:5])
    assert a.info.extra["train_length"] == 3
    assert a.info.extra["max_length"] == max(s.x.shape[1] for s in a.splits().values())
    assert sorted(a.test) == ["len_004", "len_005", "len_006"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"train_length": 4, "test_max": 4}, "test_max"),
        ({"train_length": 4, "test_min": 3}, "test_min"),
        ({"n_names": 10, "test_max": 8}, "n_names"),
        ({"ops": ["/"]}, "ops"),
        ({"p": 1}, "p"),
    ],
)
def test_bad_params_are_spec_errors(params, field) -> None:
    with pytest.raises(SpecError, match=field):
        parse_spec(
            {
                "task": {"name": "computation_graph", "params": params},
                "model": {"name": "looped_transformer"},
                "steps": 10,
            }
        )


def model(info, **params):  # noqa: ANN001, ANN201
    entry = MODELS.get("looped_transformer")
    torch.manual_seed(0)
    return entry.obj(entry.params(d_model=16, n_heads=2, **params), info).eval()


def test_loops_are_two_per_operation_plus_one_and_fixed_when_not_adaptive() -> None:
    data = build(width=2, n_leaves=3)
    x = data.test["len_005"].x[:4]
    n_ops = np.isin(x.numpy(), list(OP_OF)).sum(1)
    assert (n_ops == 10).all()
    assert model(data.info).n_loops(x).tolist() == [21] * 4
    assert model(data.info, adaptive=False, loops=3).n_loops(x).tolist() == [3] * 4


def test_causal_and_a_finished_row_does_not_depend_on_its_batch() -> None:
    data = build()
    m = model(data.info)
    x = data.test["len_004"].x[:2].clone()
    with torch.no_grad():
        out = m(x)
        x2 = x.clone()
        x2[:, -1] = x2[:, -1] + 1 if x2[0, -1] + 1 < data.info.vocab_size else x2[:, -1] - 1
        assert torch.allclose(m(x2)[:, :-1], out[:, :-1], atol=1e-5)  # loops kept: names only
        deep = data.test["len_006"].x[:1]
        pad = torch.zeros(1, deep.shape[1] - x.shape[1], dtype=torch.long)
        both = torch.cat([torch.cat([x[:1], pad], 1), deep])
        assert torch.allclose(m(both)[0, : x.shape[1]], out[0], atol=1e-5)


def test_weight_tied_parameters_do_not_depend_on_loops_and_deeper_inputs_run() -> None:
    data = build()
    sizes = {
        sum(p.numel() for p in model(data.info, adaptive=False, loops=k).parameters())
        for k in (1, 4, 16)
    }
    assert len(sizes) == 1
    with torch.no_grad():
        out = model(data.info)(data.test["len_006"].x)
    assert out.shape[:2] == data.test["len_006"].x.shape and torch.isfinite(out).all()


@pytest.mark.parametrize("params", [{"max_len": 20}, {"max_loops": 20}])
def test_a_model_too_small_for_the_deepest_input_is_an_error(params) -> None:
    """Too short for the longest test input, or too few loops for the deepest: exit 2, named."""
    (field,) = params
    with pytest.raises(SpecError, match=field):
        prepare(
            parse_spec(
                {
                    "task": {"name": "computation_graph"},
                    "model": {"name": "looped_transformer", "params": params},
                    "steps": 1,
                }
            )
        )


def test_preset_is_the_looped_model_on_the_paper_depths() -> None:
    spec = load_run_spec("length-looped", ["steps=1"])
    assert spec.model.name == "looped_transformer" and spec.task.name == "computation_graph"
    assert (spec.task.params["train_length"], spec.task.params["test_max"]) == (3, 6)
    assert preset_description("length-looped").startswith("Looped weight-tied transformer")
