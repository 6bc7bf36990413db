"""Tasks of clusters C5/C7: multicolor digits and the Gaussian spurious model (#16), digit views
(#77, #102), the PCFG corpus (#69), easy/hard features and the USEFUL re-weighting (#80)."""

from __future__ import annotations

import pytest
import torch

from genlab.data import Split
from genlab.derived.useful import slow_cluster, upsample
from genlab.engine import run_spec
from genlab.errors import SpecError
from genlab.spec import parse_spec
from genlab.tasks import TASKS
from genlab.tasks.multicolor import BORDER, PALETTE
from genlab.tasks.pcfg_lm import alphabet


def build(name, **params):
    e = TASKS.get(name)
    return e.obj(e.params.model_validate(params), 0)


def patch_agreement(split, n_patches):
    """Share of patches whose colour is the modal colour of that patch for the example's class."""
    x, y = split.x, split.y
    colours = torch.stack([x[:, :, r, c] for r, c in BORDER[:n_patches]], dim=1)  # (N, K, 3)
    idx = (colours[..., None, :] - PALETTE).abs().sum(-1).argmin(-1)  # (N, K)
    agree = []
    for k in range(n_patches):
        for cls in range(10):
            sel = idx[y == cls, k]
            agree.append((sel == sel.mode().values).float().mean())
    return torch.stack(agree).mean().item()


def test_multicolor_patches_follow_the_class_in_training_only():
    d = build("multicolor_digits", n_patches=4, p_train=0.9)
    assert d.train["main"].x.shape[1:] == (3, 12, 12)
    assert patch_agreement(d.train["main"], 4) == pytest.approx(0.91, abs=0.04)
    assert patch_agreement(d.test["ood"], 4) < 0.3
    assert torch.equal(d.test["id"].y, d.test["ood"].y)
    # fewer training images, another p_train, same data_seed: the same OOD split
    small = build("multicolor_digits", n_patches=4, p_train=0.0, train_size=100)
    assert torch.equal(small.test["ood"].x, d.test["ood"].x)
    other = build("gaussian_spurious", n_train=50, p_train=0.5)
    assert torch.equal(other.test["ood"].x, build("gaussian_spurious").test["ood"].x)
    only = build("multicolor_digits", n_patches=4, p_train=1.0, correlated=[0])
    colours = only.train["main"].x[:, :, 0, 0]
    for cls in range(10):
        assert (
            colours[only.train["main"].y == cls] == colours[only.train["main"].y == cls][0]
        ).all()
    with pytest.raises(ValueError, match="correlated"):
        TASKS.get("multicolor_digits").params(correlated=[9], n_patches=4)


def test_gaussian_spurious_features():
    d = build("gaussian_spurious", n_classes=3, dim=4, n_spurious=5, noise=0.01, p_train=1.0)
    x = d.train["main"].x.view(-1, 6, 4)
    y = d.train["main"].y
    for f in range(6):  # every feature is a function of the class in training
        for c in range(3):
            assert x[y == c, f].std(0).max() < 0.05
    xo = d.test["ood"].x.view(-1, 6, 4)
    assert xo[d.test["ood"].y == 0, 0].std(0).max() < 0.05  # invariant keeps its class mean
    assert xo[d.test["ood"].y == 0, 3].std(0).max() > 0.2  # spurious ones do not


def test_digits_views_share_images():
    a = build("digits_views", label="class", angles=[0.0, 90.0])
    b = build("digits_views", label="rotation", angles=[0.0, 90.0])
    c = build("digits_views", label="parity", angles=[0.0, 90.0])
    assert torch.equal(a.train["main"].x, b.train["main"].x)
    assert torch.equal(c.train["main"].y, a.train["main"].y % 2)
    assert b.info.n_outputs == 2 and set(b.train["main"].y.tolist()) == {0, 1}
    with pytest.raises(ValueError, match="two distinct angles"):
        TASKS.get("digits_views").params(label="rotation")


def test_pcfg_windows_come_from_the_stream():
    d = build("pcfg_lm", seq_len=16, train_chars=500, eval_chars=200)
    s = d.train["main"]
    stream = s.meta["stream"]
    assert torch.equal(s.x.flatten(), stream[: s.x.numel()])
    assert torch.equal(s.y.flatten(), stream[1 : s.x.numel() + 1])
    text = "".join(alphabet()[i] for i in stream.tolist())
    assert ". " in text and set(text) <= set(alphabet())
    again = build("pcfg_lm", seq_len=16, train_chars=500, eval_chars=200)
    assert torch.equal(again.test["main"].x, d.test["main"].x)


def test_easy_hard_share_of_fast_examples():
    d = build("easy_hard_features", p_fast=0.7, n_train=4000)
    assert d.train["main"].meta["fast"].float().mean().item() == pytest.approx(0.7, abs=0.03)
    x = d.train["main"].x
    assert x[~d.train["main"].meta["fast"], :20].abs().max() < 1.0  # only noise there


def test_slow_cluster_and_upsample():
    y = torch.tensor([0] * 6 + [1] * 6)
    logits = torch.zeros(12, 2)
    logits[torch.arange(12), y] = torch.tensor([5.0, 5.1, 4.9, 0.1, 0.2, 0.0] * 2)
    slow = slow_cluster(logits, y, 0)
    assert slow.tolist() == [False] * 3 + [True] * 3 + [False] * 3 + [True] * 3
    up = upsample(Split(torch.arange(12.0)[:, None], y), slow, 3)
    assert len(up) == 12 + 2 * 6 and up.meta["upsampled"] == 6


def test_useful_task_reads_its_run(store):
    task = {"name": "easy_hard_features", "params": {"n_train": 200, "n_test": 100}}
    base = {
        "model": {"name": "mlp", "params": {"width": 8, "depth": 1}},
        "steps": 10,
        "eval": {"every": 10, "log_points": 0},
    }
    early = run_spec(parse_spec({**base, "task": task}), store, progress=False)
    for mode in ("useful", "random"):
        wrapped = {"name": "useful", "params": {"task": task, "run": early.run_id, "mode": mode}}
        r = run_spec(parse_spec({**base, "task": wrapped}), store, progress=False)
        assert r.status == "done"
    other = {
        "name": "useful",
        "params": {"task": {**task, "params": {"n_train": 300}}, "run": early.run_id},
    }
    with pytest.raises(SpecError, match="another task"):
        run_spec(parse_spec({**base, "task": other}), store, progress=False)
    with pytest.raises(SpecError, match="task.params.task.params.nope"):
        parse_spec(
            {
                **base,
                "task": {
                    "name": "useful",
                    "params": {
                        "task": {"name": "digits", "params": {"nope": 1}},
                        "run": early.run_id,
                    },
                },
            }
        )
