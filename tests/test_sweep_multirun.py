"""A sweep from the command line (``genlab sweep dg-colored method.name=erm,mixup seed=0..2``):
comma lists and integer ranges are grid axes, one value an override, seeds by ``seed=``; a bad key
or value exits 2 with one line naming it and what is allowed, nothing written; the same command
resumes its sweep."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from genlab.cli import app
from genlab.errors import SpecError
from genlab.store import Store
from genlab.sweep import multirun, plan
from genlab.sweep.multirun import parse_list, parse_values, split_top_level

from .test_user_errors import one_line_error

runner = CliRunner()
# tiny grokking runs (tests/conftest.py's TINY), as command-line overrides
TINY = [
    "task.p=11",
    "steps=30",
    "batch_size=100000",
    'model.name="mlp"',
    "model.params={}",
    "eval.every=15",
    "eval.log_points=0",
    "checkpoint_every=15",
    "stop=[]",
]


def test_axes_ranges_overrides_and_seeds():
    sw = multirun(
        "dg-colored",
        [
            "method.name=erm,mixup",
            "seed=0..2",
            "steps=20",
            "optimizer.lr=1e-3,3e-3",
            "model.width=64",
        ],
    )
    assert sw.name == "dg-colored" and sw.base == "dg-colored"
    assert sw.grid == {"method.name": ["erm", "mixup"], "optimizer.lr": [1e-3, 3e-3]}
    assert sw.seeds == [0, 1, 2] and sw.set == ["steps=20", "model.width=64"]
    runs = plan(sw)
    assert len(runs) == 12
    assert {(p["labels"]["method.name"], p["spec"].steps) for p in runs} == {
        ("erm", 20),
        ("mixup", 20),
    }
    assert multirun("dg-colored", ["seeds=3"]).seeds == [0, 1, 2]  # a count
    assert multirun("dg-colored", ["seed=4"]).seeds == [4]  # one seed
    assert multirun("dg-colored", ["data_seed=0"]).data_seeds == [0]
    assert (
        multirun("dg-colored", ["seed=0..2"]).sweep_id
        == multirun("dg-colored", ["seed=0,1,2"]).sweep_id
    )


def test_values_split_outside_brackets_and_quotes():
    assert parse_values("-1..1") == [-1, 0, 1]
    assert parse_values("[16,32]") == [[16, 32]]  # one value: a list
    assert parse_values("[16,32],[8]") == [[16, 32], [8]]
    assert parse_values('"a,b",c') == ["a,b", "c"]
    assert split_top_level("{a = 1, b = 2},x") == ["{a = 1, b = 2}", "x"]
    assert parse_list("[erm,my_penalty]") == ["erm", "my_penalty"]
    assert parse_list("erm") == "erm"
    with pytest.raises(SpecError, match="first end must not exceed"):
        parse_values("3..1")
    with pytest.raises(SpecError, match="empty value"):
        parse_values("erm,,mixup")
    with pytest.raises(SpecError, match="given twice"):
        multirun("dg-colored", ["seed=0", "seeds=2"])


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["method.nam=erm,mixup"],
            "method.nam=erm: method.params.nam: unknown field; allowed: loss",
        ),
        (
            ["method.name=erm,mixpu"],
            "method.name=mixpu: unknown method 'mixpu' (did you mean 'mixup'?)",
        ),
        (["optimizer.lrr=0.1"], "optimizer.lrr: unknown field; allowed: name, lr,"),
        (["steps=-1"], "steps: Input should be greater than"),
        (["method.name"], "must look like key.path=value"),
    ],
)
def test_bad_key_or_value_exits_2_naming_it(tmp_path, args, says):
    store = tmp_path / "store"
    res = runner.invoke(app, ["sweep", "dg-colored", *args, "seed=0..1", "--store", str(store)])
    assert says in one_line_error(res, 2)
    assert not store.exists()


def test_the_same_command_resumes_the_sweep(tmp_path):
    store = tmp_path / "store"
    args = [
        "sweep",
        "grokking",
        *TINY,
        "optimizer.lr=1e-3,3e-3",
        "seed=0..1",
        "--store",
        str(store),
        "-q",
        "--json",
    ]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    import json

    a, b = json.loads(first.stdout), json.loads(again.stdout)
    assert a["sweep_id"] == b["sweep_id"] and a["counts"] == {"done": 4}
    assert b["counts"] == {"skipped": 4}  # nothing trained twice
    assert len(Store(store).runs()) == 4


def test_a_preset_without_axes_is_not_a_sweep_file(tmp_path):
    res = runner.invoke(app, ["sweep", "dg-colored", "--store", str(tmp_path / "s")])
    assert "genlab sweep dg-colored method.name=erm,mixup seed=0..2" in one_line_error(res, 2)
