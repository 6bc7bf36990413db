"""Plugin contracts checked when a run is built (genlab.engine.contracts): logits that match
``info.n_outputs`` and a ``loss`` returning ``(Tensor, dict)``; a violation names the plugin's file
and line and exits 2 with nothing written. Unknown names get "did you mean" and "forgot --import?"."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genlab.cli import app

from .test_user_errors import one_line_error

runner = CliRunner()

PLUGIN = '''
import torch
from torch import nn
from genlab.losses import cross_entropy
from genlab.methods import METHODS, Method
from genlab.models import MODELS


@MODELS.register("{prefix}_wide")
class Wide(nn.Module):
    """Three logits too many."""

    def __init__(self, params, info):
        super().__init__()
        self.lin = nn.Linear(int(torch.tensor(info.input_shape).prod()), info.n_outputs + 3)

    def forward(self, x):
        return self.lin(x.flatten(1))


@METHODS.register("{prefix}_bare")
class Bare(Method):
    """Returns a bare tensor."""

    def loss(self, model, batches):
        x, y = (torch.cat(t) for t in zip(*batches.values()))
        return cross_entropy(model(x), y)


@METHODS.register("{prefix}_good")
class Good(Method):
    """Keeps the contract."""

    def loss(self, model, batches):
        x, y = (torch.cat(t) for t in zip(*batches.values()))
        return cross_entropy(model(x), y), {{}}
'''


pytestmark = pytest.mark.usefixtures("unload_plugins")


def _plugin(tmp_path: Path, prefix: str) -> Path:
    f = tmp_path / f"{prefix}_plugin.py"
    f.write_text(textwrap.dedent(PLUGIN.format(prefix=prefix)))
    return f


def _run(plugin: Path, store: Path, *overrides: str):
    return runner.invoke(
        app,
        [
            "--import",
            str(plugin),
            "run",
            "dg-colored",
            "steps=5",
            *overrides,
            "--store",
            str(store),
        ],
    )


def test_model_with_wrong_number_of_logits_exits_2_naming_its_forward(tmp_path):
    plugin = _plugin(tmp_path, "c1")
    store = tmp_path / "store"
    line = one_line_error(_run(plugin, store, "model.name=c1_wide", "model.params={}"), 2)
    assert "model 'c1_wide' returns logits of shape (2, 5)" in line
    assert "info.n_outputs = 2" in line and f"({plugin}:17)" in line  # the forward's def
    assert not store.exists()  # nothing written, nothing trained


def test_loss_returning_a_bare_tensor_exits_2_naming_the_loss(tmp_path):
    plugin = _plugin(tmp_path, "c2")
    store = tmp_path / "store"
    line = one_line_error(_run(plugin, store, "method.name=c2_bare"), 2)
    assert "method 'c2_bare': loss must return (scalar Tensor, dict of logs)" in line
    assert "a bare Tensor" in line and f"({plugin}:25)" in line  # the loss's def
    assert not store.exists()


def test_a_plugin_keeping_the_contracts_trains_as_before(tmp_path):
    """The check runs on copies, random state restored: the same metrics as without it."""
    plugin = _plugin(tmp_path, "c3")
    res = _run(plugin, tmp_path / "a", "method.name=c3_good", "--json", "--no-plot")
    assert res.exit_code == 0, res.output
    from genlab.engine import contracts

    original = contracts.check_method
    contracts.check_method = lambda *a, **k: None
    try:
        again = _run(plugin, tmp_path / "b", "method.name=c3_good", "--json", "--no-plot")
    finally:
        contracts.check_method = original
    assert json.loads(res.stdout)["final"] == json.loads(again.stdout)["final"]


def test_unknown_name_suggests_a_close_one(tmp_path):
    res = runner.invoke(
        app, ["run", "dg-colored", "method.name=ermm", "--store", str(tmp_path / "s")]
    )
    line = one_line_error(res, 2)
    assert "unknown method 'ermm' (did you mean 'erm'?); allowed: " in line


def test_unknown_name_a_plugin_file_registers_hints_import(tmp_path, monkeypatch):
    _plugin(tmp_path, "c4")
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["run", "dg-colored", "method.name=c4_good", "--store", "s"])
    line = one_line_error(res, 2)
    assert "./c4_plugin.py registers it: forgot --import ./c4_plugin.py?" in line
