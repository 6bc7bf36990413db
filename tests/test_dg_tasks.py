"""Domain-shift tasks: DomainBed's constructions, data from data_seed alone, bad input exit 2."""

from __future__ import annotations

import pytest
import torch
from typer.testing import CliRunner

from genlab.cli import app
from genlab.datasets.digits import load_digits_tensors
from genlab.errors import SpecError
from genlab.spec import load_run_spec
from genlab.tasks import TASKS
from genlab.tasks.dg_rotated import rotate


def build(name: str, seed: int = 0, **params):
    entry = TASKS.get(name)
    return entry.obj(entry.params.model_validate(params), seed)


def test_colored_digits_follows_domainbed():
    d = build("colored_digits", test_envs=[])
    assert set(d.train) == {"+90%", "+80%", "-90%"} and set(d.val) == set(d.train)
    for env, agree in (("+90%", 0.9), ("+80%", 0.8), ("-90%", 0.1)):
        s = d.train[env]
        assert s.x.shape[1:] == (2, 8, 8)
        color = (s.x[:, 1].sum((1, 2)) > 0).long()
        assert s.x[torch.arange(len(s)), 1 - color].abs().sum() == 0  # other channel zeroed
        assert (color == s.y).float().mean().item() == pytest.approx(agree, abs=0.05)
    n = sum(len(s) for s in d.train.values()) + sum(len(s) for s in d.val.values())
    assert n == 1797


def test_grayscale_and_color_flip_keep_the_split_and_labels():
    d = build("colored_digits", test_envs=[2])
    g = build("colored_digits", test_envs=[2], grayscale=True)
    u = build("colored_digits", test_envs=[2], color_flip=[0.5, 0.5, 0.5])
    for env, s in d.test.items():
        assert torch.equal(s.y, g.test[env].y) and torch.equal(s.y, u.test[env].y)
        assert torch.equal(g.test[env].x[:, 0], g.test[env].x[:, 1])  # no color: both channels
        assert torch.equal(s.x.sum(1), g.test[env].x[:, 0])  # the same digits
    color = (u.test["-90%"].x[:, 1].sum((1, 2)) > 0).long()
    assert (color == u.test["-90%"].y).float().mean().item() == pytest.approx(0.5, abs=0.07)
    with pytest.raises(ValueError, match="color_flip"):
        TASKS.get("colored_digits").params.model_validate({"color_flip": [0.1, 0.2, 1.5]})


def test_colored_test_env_moves_to_test():
    d = build("colored_digits", test_envs=[2])
    assert set(d.train) == {"+90%", "+80%"} and set(d.test) == {"-90%"}
    assert d.info.extra["train_envs"] == ["+90%", "+80%"]


def test_data_depends_only_on_data_seed():
    a, b, c = build("rotated_digits", 3), build("rotated_digits", 3), build("rotated_digits", 4)
    assert torch.equal(a.train["0deg"].x, b.train["0deg"].x)
    assert not torch.equal(a.train["0deg"].x, c.train["0deg"].x)
    s1 = load_run_spec("dg-rotated", ["method.name=groupdro", "seed=1", "steps=3"])
    s2 = load_run_spec("dg-rotated", ["method.name=erm", "seed=2", "steps=3"])
    assert s1.data_seed == s2.data_seed  # the method and its seed never move the data


def test_rotation_by_zero_is_identity_and_envs_are_rotated():
    x, _ = load_digits_tensors()
    assert torch.allclose(rotate(x[:5], 0), x[:5], atol=1e-5)
    assert not torch.allclose(rotate(x[:5], 45), x[:5], atol=1e-2)
    d = build("rotated_digits", test_envs=[0, 5], size=16)
    assert d.info.input_shape == (1, 16, 16) and set(d.test) == {"0deg", "75deg"}


def test_cross_bias_color_agrees_in_training_only():
    d = build("cross_bias_digits", rho=0.9)
    from genlab.tasks.dg_cross_bias import PALETTE

    def agree(s):
        corner = s.x[:, :, 0, 0]  # digits' corners are background
        color = torch.cdist(corner, PALETTE).argmin(1)
        return (color == s.y).float().mean().item()

    assert agree(d.train["biased"]) == pytest.approx(0.9, abs=0.05)
    assert agree(d.test["unbiased"]) < 0.25


def test_two_gaussian_task_envs():
    d = build("two_gaussian_ood", n=10, m=30, d=5)
    assert len(d.train["target"]) == 10 and len(d.train["ood"]) == 30
    assert d.train["target"].x.shape == (10, 5)


@pytest.mark.parametrize(
    "bad", ["task.test_envs=[3]", "task.test_envs=[0,1,2]", "task.test_envs=[-1]"]
)
def test_bad_test_envs_exit_2_nothing_written(tmp_path, bad):
    store = tmp_path / "store"
    res = CliRunner().invoke(app, ["run", "dg-colored", bad, "--store", str(store), "-q"])
    assert res.exit_code == 2, res.output
    assert "test_envs" in res.output or "test env" in res.output
    assert not store.exists()


def test_two_env_method_on_one_env_task_is_spec_error(tmp_path):
    from genlab.engine.train import prepare

    spec = load_run_spec(
        "dg-colored",
        [
            "task.name=cross_bias_digits",
            "task.params={}",
            "model.name=cnn",
            "model.params={}",
            "method.name=irm",
        ],
    )
    with pytest.raises(SpecError, match="at least 2 training environments"):
        prepare(spec)
    res = CliRunner().invoke(
        app,
        [
            "run",
            "dg-colored",
            "task.test_envs=[0,1]",
            "method.name=vrex",
            "--store",
            str(tmp_path / "s"),
            "-q",
        ],
    )
    assert res.exit_code == 2 and not (tmp_path / "s").exists()


def test_run_dg_colored_shows_every_environment(tmp_path):
    res = CliRunner().invoke(
        app, ["run", "dg-colored", "steps=3", "--store", str(tmp_path), "-q", "--no-plot"]
    )
    assert res.exit_code == 0, res.output
    for split in ("train/+90%", "val/+80%", "test/-90%"):
        assert split in res.output


def test_mnist1d_domains_from_the_generator():
    a = build("mnist1d_domains", 1, n_per_env=40, test_envs=[4])
    b = build("mnist1d_domains", 1, n_per_env=40, test_envs=[4])
    assert a.info.input_shape == (40,) and set(a.test) == {"noise"}
    assert len(a.train["base"]) + len(a.val["base"]) == 40
    assert torch.equal(a.train["shift"].x, b.train["shift"].x)
    # the noisy environment is rougher: larger mean absolute first difference
    rough = {k: s.x.diff(dim=1).abs().mean().item() for k, s in {**a.train, **a.test}.items()}
    assert rough["noise"] > rough["base"]


def test_shifted_digits_move_pixels_not_appearance():
    """Circular integer shifts keep every image's pixel values (its appearance), unlike a bilinear
    rotation, which lowers contrast: the negative control of dg.instance_norm rests on this."""
    d = build("shifted_digits")
    assert set(d.train) == {"0px"} and set(d.test) == {"1px", "2px", "3px"}
    assert d.info.input_shape == (1, 8, 8)
    x, _ = load_digits_tensors()
    contrast = x.flatten(1).std(1).mean().item()
    for name, s in d.test.items():
        k = int(name[0])
        back = torch.roll(s.x, (-k, -k), dims=(2, 3))  # the digits as loaded
        assert (back.flatten(1)[:, None] == x.flatten(1)[None]).all(-1).any(1).all()
        assert not torch.equal(back, s.x)  # the layout moved
        assert s.x.flatten(1).std(1).mean().item() == pytest.approx(contrast, abs=0.02)
    assert rotate(x, 30).flatten(1).std(1).mean() < 0.9 * contrast  # rotation: lower contrast
    n = sum(len(s) for part in (d.train, d.val, d.test) for s in part.values())
    assert n == 1797


def test_object_contexts_source_concept_shift_relabels_sources_only():
    """``train_concept_shift`` (issue #31) moves a share of the training and validation labels to
    another class and leaves the images, the contexts and the test set of a data seed alone; at
    its default it is left out of the params, so earlier run ids stay."""
    entry = TASKS.get("object_contexts")
    assert "train_concept_shift" not in entry.params().model_dump()
    a, b = build("object_contexts", 3), build("object_contexts", 3, train_concept_shift=0.5)
    assert torch.equal(a.test["unseen"].x, b.test["unseen"].x)
    assert torch.equal(a.test["unseen"].y, b.test["unseen"].y)
    moved = []
    for part in ("train", "val"):
        for env in getattr(a, part):
            sa, sb = getattr(a, part)[env], getattr(b, part)[env]
            assert torch.equal(sa.x, sb.x)
            moved.append(sa.y != sb.y)
    assert torch.cat(moved).float().mean().item() == pytest.approx(0.5, abs=0.05)
