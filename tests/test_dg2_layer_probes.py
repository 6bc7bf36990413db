"""The ``layer_probes`` probe (Uselis & Oh, #103): per-layer features and linear probes."""

from __future__ import annotations

import pytest
import torch

from genlab.data import Split, TaskData, TaskInfo
from genlab.models import MODELS
from genlab.probes import PROBES, EvalContext
from genlab.probes.layer_probes import (
    LayerProbeParams,
    fit_linear_probe,
    layer_features,
    probe_accuracy,
)
from genlab.tasks import TASKS


def test_fit_linear_probe_separable_and_chance():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(400, 5, generator=g, dtype=torch.float64)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()
    probe = fit_linear_probe(x[:300], y[:300], 2, steps=100, l2=1e-4)
    assert probe_accuracy(probe, x[300:], y[300:]) > 0.95
    # labels independent of the features: held-out accuracy near chance, so the test can fail
    y_rand = torch.randint(0, 2, (400,), generator=g)
    probe = fit_linear_probe(x[:300], y_rand[:300], 2, steps=100, l2=1e-4)
    assert probe_accuracy(probe, x[300:], y_rand[300:]) < 0.7


def _model(name: str, params: dict, info: TaskInfo) -> torch.nn.Module:
    entry = MODELS.get(name)
    return entry.obj(entry.params.model_validate(params), info)


def test_layer_features_cnn_blocks_and_grid():
    info = TaskInfo(kind="classification", n_outputs=3, input_shape=(2, 8, 8))
    model = _model("cnn", {"channels": [4, 6, 8], "pool_every": 1}, info)
    x = torch.randn(5, 2, 8, 8)
    pooled = layer_features(model, x, grid=1)
    assert [f.shape for f in pooled] == [(5, 4), (5, 6), (5, 8)]
    model.eval()
    assert torch.allclose(pooled[-1].float(), model.featurize(x).detach(), atol=1e-5)
    model.train()
    flat = layer_features(model, x, grid=4)  # maps 4x4, 2x2, 1x1 after each block's pool
    assert [f.shape for f in flat] == [(5, 4 * 16), (5, 6 * 4), (5, 8)]
    assert model.training  # the probe restores the mode


def test_layer_features_mlp_hooks():
    info = TaskInfo(kind="classification", n_outputs=3, input_shape=(7,))
    model = _model("mlp", {"width": 9, "depth": 3}, info)
    feats = layer_features(model, torch.randn(4, 7))
    assert len(feats) == 3 and all(f.shape == (4, 9) for f in feats)


def _toy_data(shift: float) -> TaskData:
    g = torch.Generator().manual_seed(1)

    def split(n: int, s: float) -> Split:
        x = torch.randn(n, 6, generator=g)
        y = (x[:, 0] > 0).long()
        return Split(x + s, y)

    return TaskData(
        train={"a": split(200, 0.0)},
        val={"a": split(50, 0.0)},
        test={"b": split(100, shift)},
        info=TaskInfo(kind="classification", n_outputs=2, input_shape=(6,)),
    )


def test_probe_reports_every_split_and_layer_and_skips_early_steps():
    data = _toy_data(0.0)
    model = _model("mlp", {"width": 16, "depth": 2}, data.info)
    fn = PROBES.get("layer_probes").obj
    out = fn(model, EvalContext(model, data, step=10), LayerProbeParams(min_step=5, steps=50))
    assert out[("model", "n_probe_layers")] == 2
    for split in ("train/a", "val/a", "test/b"):
        for j in range(2):
            assert 0 <= out[(split, f"layer{j}_probe_acc")] <= 1
    # a random ReLU net keeps the sign of x0 linearly recoverable: well above chance
    assert out[("val/a", "layer0_probe_acc")] > 0.7
    assert fn(model, EvalContext(model, data, step=1), LayerProbeParams(min_step=5)) == {}


def test_probe_params_bad_input():
    with pytest.raises(ValueError, match="grid"):
        LayerProbeParams(grid=0)
    assert "layer_probes" in PROBES.names()
    assert TASKS.get("rotated_digits")  # the claim's tasks exist
