"""SweepSpec: expansion, per-axis random streams, and bad input (exit 2, nothing written)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from genlab.cli import app
from genlab.errors import SpecError
from genlab.sweep import make_executor, parse_sweep

BASE = {
    "base": "grokking",
    "set": ["task.p=11", "model.name='mlp'", "steps=5"],
    "unset": ["batch_size", "stop"],
}


def test_grid_times_seeds_and_labels():
    sw = parse_sweep(
        {**BASE, "seeds": 2, "grid": {"optimizer.lr": [1e-3, 2e-3], "task.p": [11, 13]}}
    )
    runs = sw.expand()
    assert len(runs) == 2 * 2 * 2
    labels, spec = runs[-1]
    assert labels == {"optimizer.lr": 2e-3, "task.p": 13, "seed": 1, "data_seed": 1}
    assert spec.optimizer.lr == 2e-3 and spec.task.params["p"] == 13 and spec.seed == 1
    assert spec.model.name == "mlp" and spec.batch_size is None
    assert len({s.run_id for _, s in runs}) == 8


def test_data_seeds_fixed_and_count_form():
    sw = parse_sweep({**BASE, "seeds": 3, "data_seeds": [7]})
    assert [(s.seed, s.data_seed) for _, s in sw.expand()] == [(0, 7), (1, 7), (2, 7)]


def test_random_axis_draws_do_not_depend_on_other_axes():
    one = parse_sweep(
        {**BASE, "trials": 5, "random": {"optimizer.lr": {"log_uniform": [1e-4, 1e-2]}}}
    )
    two = parse_sweep(
        {
            **BASE,
            "random": {
                "trials": 5,
                "optimizer.lr": {"log_uniform": [1e-4, 1e-2]},
                "optimizer.weight_decay": {"uniform": [0.0, 1.0]},
            },
        }
    )
    lr1 = [p["optimizer.lr"] for p in one.points()]
    lr2 = [p["optimizer.lr"] for p in two.points()]
    assert lr1 == lr2 and len(set(lr1)) == 5
    assert all(1e-4 <= v <= 1e-2 for v in lr1)
    other = parse_sweep(
        {
            **BASE,
            "random_seed": 1,
            "trials": 5,
            "random": {"optimizer.lr": {"log_uniform": [1e-4, 1e-2]}},
        }
    )
    assert [p["optimizer.lr"] for p in other.points()] != lr1


def test_model_name_axis_starts_from_that_models_defaults():
    sw = parse_sweep(
        {
            "base": "grokking",
            "unset": ["stop"],
            "set": ["task.p=11", "steps=3"],
            "grid": {"model.name": ["transformer", "mlp"]},
        }
    )
    names = [s.model.name for _, s in sw.expand()]
    assert names == ["transformer", "mlp"]


@pytest.mark.parametrize(
    "data, words",
    [
        ({**BASE, "grid": {"task.q": [1, 2]}}, ["task.q", "unknown field"]),
        ({**BASE, "grid": {"optimizer.lr": []}}, ["optimizer.lr", "empty"]),
        ({**BASE, "grid": {}}, ["grid", "empty"]),
        ({**BASE, "random": {"trials": 3}}, ["random", "no axes"]),
        ({**BASE, "grid": {"optimizer.lr": [-1.0]}}, ["optimizer.lr", "greater than 0"]),
        ({**BASE, "seeds": []}, ["seeds", "empty"]),
        ({**BASE, "seeds": 0}, ["seeds", ">= 1"]),
        ({**BASE, "grid": {"seed": [1, 2]}}, ["seed", "seeds"]),
        ({**BASE, "random": {"optimizer.lr": {"uniform": [1, 0]}}}, ["low must not exceed"]),
        ({**BASE, "random": {"optimizer.lr": {}}}, ["exactly one"]),
        ({**BASE, "colour": 1}, ["colour", "unknown field"]),
    ],
)
def test_bad_sweeps_name_the_field(data, words):
    with pytest.raises(SpecError) as info:
        parse_sweep(data).expand()
    for w in words:
        assert w in str(info.value)


@pytest.mark.parametrize(
    "name, workers, address, words",
    [
        ("serial", 2, None, ["--workers", "serial"]),
        ("vmap", None, "ray://x:1", ["--address", "ray"]),
        ("pool", 0, None, ["--workers", ">= 1"]),
        ("pool", None, "ray://x:1", ["--address", "ray"]),
        ("dask", None, None, ["executor must be one of"]),
    ],
)
def test_conflicting_executor_options(name, workers, address, words):
    with pytest.raises(SpecError) as info:
        make_executor(name, workers, address)
    for w in words:
        assert w in str(info.value)


def test_ray_without_ray_names_the_extra(monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *a, **k):
        if name == "ray":
            raise ImportError("no ray")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(SpecError, match=r"pip install 'genlab\[ray\]'"):
        make_executor("ray")


@pytest.mark.parametrize(
    "toml, args",
    [
        ('base = "grokking"\n[grid]\n"task.q" = [1]\n', []),
        ('base = "grokking"\n[grid]\n"optimizer.lr" = []\n', []),
        ('base = "grokking"\n[grid]\n', []),
        ('base = "grokking"\nseeds = 2\n', ["--executor", "serial", "--workers", "2"]),
        ('base = "grokking"\nseeds = 2\n', ["--executor", "pool", "--workers", "0"]),
        ('base = "grokking"\nseeds = 2\n', ["--executor", "vmap", "--address", "x:1"]),
    ],
)
def test_cli_bad_input_exits_2_and_writes_nothing(tmp_path, toml, args):
    f = tmp_path / "s.toml"
    f.write_text(toml)
    store = tmp_path / "store"
    res = CliRunner().invoke(app, ["sweep", str(f), "--store", str(store), *args])
    assert res.exit_code == 2, res.output
    assert not store.exists()


def test_cli_dry_run_lists_runs(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('base = "grokking"\nseeds = 3\n[grid]\n"optimizer.lr" = [1e-3, 3e-3]\n')
    res = CliRunner().invoke(app, ["sweep", str(f), "--dry-run", "--store", str(tmp_path / "st")])
    assert res.exit_code == 0, res.output
    assert "6 runs" in res.output and not (tmp_path / "st").exists()


@pytest.mark.parametrize(
    "axes",
    [
        {"grid": {"optimizer.lr": [1e-3, 3e-3]}},
        {"trials": 2, "random": {"optimizer.lr": {"log_uniform": [1e-4, 1e-2]}}},
        {},
    ],
)
def test_a_saved_sweep_file_is_accepted_with_the_same_id(tmp_path, axes):
    """What the store keeps (``model_dump``, with empty ``grid``/``random`` tables) and the site
    saves as ``sweeps/<id>.json`` is a sweep file ``genlab sweep FILE`` reads back as the same
    sweep: the same id and the same runs."""
    import json

    from genlab.sweep.spec import as_sweep_file

    sw = parse_sweep({**BASE, "seeds": 2, **axes})
    stored = sw.model_dump(mode="json")
    f = tmp_path / f"{sw.sweep_id}.json"
    f.write_text(json.dumps(as_sweep_file(stored), indent=2))
    res = CliRunner().invoke(
        app, ["sweep", str(f), "--dry-run", "--json", "--store", str(tmp_path / "st")]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["sweep_id"] == sw.sweep_id and len(doc["runs"]) == len(sw.expand())
    assert not (tmp_path / "st").exists()
