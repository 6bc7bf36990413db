"""Compositional generators: held-out combinations, shape x colour images, the factorisation R^2,
string rewrites and SCAN in-context episodes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from genlab.engine.train import prepare
from genlab.errors import SpecError
from genlab.losses import IGNORE
from genlab.probes.factorization import additive_r2
from genlab.spec import parse_spec
from genlab.tasks import TASKS
from genlab.tasks.combos import combination_split
from genlab.tasks.scan_grammar import interpret
from genlab.tasks.string_rewrite import rewrite


def build(name: str, **params):
    entry = TASKS.get(name)
    return entry.obj(entry.params(**params), 0)


def spec(task: str, model: str, **params) -> dict:
    return {"task": {"name": task, "params": params}, "model": {"name": model}, "steps": 1}


def test_combination_split_covers_every_value_and_holds_some_out():
    trained, held = combination_split((8, 8), 0.25, np.random.default_rng(0))
    assert len(trained) == 16 and len(held) == 48
    assert set(trained[:, 0]) == set(range(8)) == set(trained[:, 1])
    assert not {tuple(c) for c in trained} & {tuple(c) for c in held}
    again, _ = combination_split((8, 8), 0.25, np.random.default_rng(0))
    assert np.array_equal(trained, again)


@pytest.mark.parametrize(
    ("coverage", "message"), [(1.0, "no held-out"), (0.05, "needed to show every value")]
)
def test_bad_coverage_is_a_spec_error(coverage, message):
    with pytest.raises(SpecError, match=f"coverage.*{message}"):
        prepare(parse_spec(spec("comp_shapes", "attribute_cnn", coverage=coverage)))


def test_coverage_above_one_is_refused_at_validation():
    with pytest.raises(SpecError, match="coverage"):
        parse_spec(spec("comp_shapes", "attribute_cnn", coverage=1.5))


def test_shapes_hold_out_combinations():
    data = build("comp_shapes", coverage=0.5, per_combo=3, n_val=2, n_test=2, n_sizes=2)
    seen = {tuple(r) for r in data.train["main"].y.tolist()}
    assert seen == {tuple(r) for r in data.val["main"].y.tolist()}
    assert not seen & {tuple(r) for r in data.test["heldout"].y.tolist()}
    assert data.train["main"].x.shape[1:] == (3, 16, 16) and data.info.extra["attributes"] == [
        8,
        8,
        2,
    ]


def test_entangled_colours_depend_on_the_shape():
    from genlab.tasks.shapes_colors import render

    combos = np.array([[0, 0], [1, 0]])
    plain = render(combos, 8, np.random.default_rng(0), noise=0.0, jitter=0.0)
    tangled = render(combos, 8, np.random.default_rng(0), entangled=True, noise=0.0, jitter=0.0)
    colour = lambda img: img.flatten(1).max(1).values  # noqa: E731 - the painted RGB
    assert torch.allclose(colour(plain[0]), colour(plain[1]))
    assert not torch.allclose(colour(tangled[0]), colour(tangled[1]))


def test_additive_r2():
    g = torch.Generator().manual_seed(0)
    u, v = torch.randn(5, 16, generator=g), torch.randn(4, 16, generator=g)
    combos = torch.tensor([(a, b) for a in range(5) for b in range(4)])
    additive = u[combos[:, 0]] + v[combos[:, 1]]
    assert additive_r2(additive.double(), combos, [5, 4]) == pytest.approx(1.0)
    entangled = torch.randn(20, 16, generator=g).double()
    assert additive_r2(entangled, combos, [5, 4]) < 0.5


def test_rewrite_replaces_the_leftmost_occurrence():
    assert rewrite([1, 2, 1, 2], [1, 2], [3]) == [3, 1, 2]
    assert rewrite([4, 4], [1, 2], [3]) == [4, 4]


def test_string_rewrite_tests_unseen_rules():
    data = build("string_rewrite", n_rules=20, per_rule=5, n_test_rules=10, n_test=50, n_val=20)
    s = data.info.extra["src_len"]

    def rules(split):
        out = set()
        for row in split.x[:, :s].tolist():
            row = [t for t in row if t]
            arrow, sep = row.index(3), row.index(4)
            out.add((tuple(row[:arrow]), tuple(row[arrow + 1 : sep])))
        return out

    train = rules(data.train["main"])
    assert len(train) == 20 and rules(data.val["main"]) <= train
    assert not rules(data.test["unseen_rules"]) & train
    assert len(data.train["main"]) == 100


def test_string_rewrite_zipf_skews_the_rules():
    data = build("string_rewrite", n_rules=50, per_rule=20, zipf=1.5, n_val=0)
    s = data.info.extra["src_len"]
    firsts = [tuple(r[:8]) for r in data.train["main"].x[:, :s].tolist()]
    counts = sorted((firsts.count(f) for f in set(firsts)), reverse=True)
    assert counts[0] > 5 * counts[len(counts) // 2]


def test_icl_episodes_show_the_query_words():
    data = build("scan_icl", n_train=30, n_val=20, n_test=20)
    s = data.info.extra["src_len"]
    words = TASKS.get("scan").obj(TASKS.get("scan").params(), 0).info.extra["vocab"]
    for split in (data.train["main"], data.test["addprim_jump"]):
        for x, y in zip(split.x[:10], split.y[:10], strict=True):
            tokens = [words[t - 3] if t >= 3 else ["PAD", "BOS", "EOS"][t] for t in x[:s].tolist()]
            tokens = [t for t in tokens if t != "PAD"]
            cut = max(i for i, t in enumerate(tokens) if t == "EOS")
            demos, query = tokens[: cut + 1], tokens[cut + 1 :]
            for w in set(query) & {"walk", "look", "run", "jump", "left", "right"}:
                assert w in demos
            answer = [words[t - 3] for t in y[s:].tolist() if t >= 3]
            if split is data.test["addprim_jump"]:  # the true tokens at test time
                assert answer == interpret(" ".join(query))
    assert (data.train["main"].y[:, :s] != IGNORE).any()  # demonstrations are scored in training
    assert (data.test["addprim_jump"].y[:, :s] == IGNORE).all()
