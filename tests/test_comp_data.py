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
from genlab.tasks.seq2seq_common import FIRST
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
    plain = render(combos, np.random.default_rng(0), noise=0.0, jitter=0.0)
    paint = np.array([np.arange(8), np.roll(np.arange(8), 3)])  # shape 1 paints colour 0 as 5
    tangled = render(combos, np.random.default_rng(0), paint, noise=0.0, jitter=0.0)
    colour = lambda img: img.flatten(1).max(1).values  # noqa: E731 - the painted RGB
    assert torch.allclose(colour(plain[0]), colour(plain[1]))
    assert not torch.allclose(colour(tangled[0]), colour(tangled[1]))
    data = build("comp_shapes", entangled=True, coverage=0.5, per_combo=2, n_val=0, n_test=2)
    x, y = data.train["main"].x, data.train["main"].y
    same_colour = (y[:, 1] == y[0, 1]) & (y[:, 0] != y[0, 0])  # other shapes, same colour value
    assert any(
        not torch.allclose(colour(x[0]), colour(x[i]), atol=0.3)
        for i in same_colour.nonzero()[:, 0]
    )


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


def test_skill_mix_applies_skills_left_to_right():
    from genlab.tasks.skill_mix import apply

    z = [3, 1, 2]
    assert apply("reverse", apply("shift_up", z, 4, []), 4, []) == [3, 2, 0]
    data = build("skill_mix", n_train=200, n_val=0, n_test=20, test_k=[4], heldout_skills=1)
    held_tok = 3 + 1 + len(data.info.extra["skills"]) - 1  # the last skill's token
    s = data.info.extra["src_len"]
    for x in data.train["main"].x[:, :s].tolist():
        skills = [t for t in x if 4 <= t < 4 + 8]
        assert held_tok not in skills or len(skills) == 1  # held-out skills train alone
    assert all(sum(4 <= t < 12 for t in x) == 4 for x in data.test["k4"].x[:, :s].tolist())
    assert all(held_tok in x for x in data.test["heldout_skill"].x[:, :s].tolist())


def test_injected_features():
    plain = build("injected_features", n_train=50, n_test=50)
    helpful = build("injected_features", features="helpful", n_train=50, n_test=50)
    assert helpful.train["main"].x.shape[1] == plain.train["main"].x.shape[1] + 4
    counts = helpful.test["main"].x[:, -4:].sum(1)
    assert torch.equal((counts > 0).long(), helpful.test["main"].y)
    misleading = build("injected_features", features="misleading", n_train=400, n_test=400)
    agree = lambda s: ((s.x[:, -1] > 0).long() == s.y).float().mean()  # noqa: E731
    assert agree(misleading.train["main"]) > 0.8 and abs(agree(misleading.test["main"]) - 0.5) < 0.1


def test_injected_features_of_partial_use():
    """The partial program (blocks within each quadrant) finds only some of the label's blocks and
    never one that is not there; the parity cue agrees with the label on ``cue_agree`` of the
    training grids of every arm, and about half of the test grids."""
    from genlab.tasks.injected_features import _parity

    part = build("injected_features", features="partial", n_train=50, n_test=2000)
    found = part.test["main"].x[:, -4:].sum(1) > 0
    y = part.test["main"].y.bool()
    assert not (found & ~y).any() and 0.5 < found[y].float().mean() < 0.9
    for features in ("none", "parity"):
        d = build("injected_features", features=features, n_train=400, n_test=2000, cue_agree=0.75)
        for split, want in ((d.train["main"], 0.75), (d.test["main"], 0.5)):
            grid = split.x[:, :36].reshape(-1, 6, 6).bool().numpy()
            agree = (torch.tensor(_parity(grid)) == split.y).float().mean()
            assert abs(agree - want) < (0.01 if want == 0.75 else 0.05)
    parity = build("injected_features", features="parity", n_train=50, n_test=50)
    assert set(parity.test["main"].x[:, -1].tolist()) <= {0.0, 4.0}


def test_multilabel_docs_augment_only_held_out_pairs():
    base = build("multilabel_docs", coverage=0.5, per_combo=5, n_val=0, n_test=3)
    aug = build("multilabel_docs", coverage=0.5, per_combo=5, n_val=0, n_test=3, augment=2)
    assert (base.train["main"].y[:, :-2] == IGNORE).all()  # labels on the last two positions
    held = {tuple(r) for r in base.test["heldout"].y[:, -2:].tolist()}
    extra = aug.train["main"].y[len(base.train["main"]) :, -2:]
    assert len(extra) == 2 * len(held) and {tuple(r) for r in extra.tolist()} == held
    assert not held & {tuple(r) for r in base.train["main"].y[:, -2:].tolist()}


def test_fact_corpus_keeps_inferences_out_of_training():
    data = build("fact_corpus", n_entities=40)
    train = {tuple(r) for r in data.train["main"].x.tolist()}
    for name in ("inference", "control"):
        assert not {tuple(r) for r in data.test[name].x.tolist()} & train
    premised = {r[0] for r in data.test["premise"].x.tolist()}
    control = {r[0] for r in data.test["control"].x.tolist()}
    is_tok = 40 + 20
    assert all((e, is_tok) in train for e in premised)
    assert not any((e, is_tok) in train for e in control)


def test_concept_walks_and_the_creativity_scorer():
    from genlab.probes.creativity import Scorer

    data = build("concept_walks", n_train=200, n_val=0, n_test=20)
    scorer = Scorer(data.info.extra)
    s = data.info.extra["src_len"]
    for x, y in zip(data.test["prompts"].x.tolist(), data.test["prompts"].y.tolist(), strict=True):
        walk = tuple(t for t in y[s:] if t >= 3)
        assert scorer.utility(walk, tuple(x[:s])) == 1.0  # the reference walk is valid
    trained = tuple(data.info.extra["train_walks"][0])
    assert scorer.novelty(trained) == 0.0
    assert scorer.utility((1, 2), (3, 4, 5)) == 0.0


def test_gcog_splits():
    data = build("gcog", n_train=300, n_val=20, n_test=30)
    info, v0 = data.info, 3 + 1 + 6 * 6  # the first operator token (IF)
    cells = info.extra["src_len"]
    occupied = lambda split: (split.x[:, :cells] != 3).sum(1)  # noqa: E731
    assert (
        occupied(data.train["main"]).max() <= 3 and (occupied(data.test["distractor"]) == 6).all()
    )
    depth = lambda split: (split.x[:, cells:] == v0).sum(1)  # noqa: E731 - IF tokens
    assert depth(data.train["main"]).max() == 1 and (depth(data.test["productive"]) == 3).all()
    for split in data.splits().values():
        assert ((split.y != IGNORE).sum(1) == 1).all()  # one answer per row


def test_gcog_distractor_split_with_one_object_holds_no_distractor():
    """``distractor_objects`` 1: the queried object alone, on boards of the training
    distribution (a design comp.gcog's docs record); too many objects for the board is refused."""
    data = build("gcog", n_train=50, n_val=0, n_test=30, distractor_objects=1)
    cells = data.info.extra["src_len"]
    assert ((data.test["distractor"].x[:, :cells] != FIRST).sum(1) == 1).all()  # FIRST: empty
    with pytest.raises(ValueError, match="distractor_objects: 7 objects"):
        build("gcog", n_train=50, n_val=0, n_test=30, distractor_objects=7)


def test_gcog_train_depth_moves_productive_trees_into_training():
    cells = build("gcog", n_train=20, n_val=0, n_test=5).info.extra["src_len"]
    v0 = 3 + 1 + 6 * 6  # IF
    default, same = (
        build("gcog", n_train=300, n_val=0, n_test=5, **kw) for kw in ({}, {"train_depth": 2})
    )
    assert torch.equal(default.train["main"].x, same.train["main"].x)  # the default draws as before
    deep = build("gcog", n_train=300, n_val=0, n_test=5, train_depth=3)
    ifs = (deep.train["main"].x[:, cells:] == v0).sum(1)
    assert ifs.max() == 3 and (ifs == 3).float().mean() > 0.2  # a third of the trees at depth 3
