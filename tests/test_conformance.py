"""Every registered task, model, method and probe, found in the registries (never listed here), built
tiny and put through ``genlab.conformance.checks``: a new component is covered by adding its file."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from genlab.cli import app
from genlab.conformance import Tiny, checks, components
from genlab.conformance.checks import UNKNOWN_KEY, invalid_values
from genlab.conformance.tiny import registry
from genlab.spec import RunSpec
from genlab.store import Store
from genlab.store_context import using_store

ALL = components()
# torch.func on CPU attention (the per-sample-gradient probes and methods): correct, only slower
VMAP_ATTENTION = pytest.mark.filterwarnings("ignore:There is a performance drop:UserWarning")
TRAINED = [c for c in ALL if c[0] in ("task", "model", "method")]


def ids(c: tuple[str, str]) -> str:
    return f"{c[0]}:{c[1]}"


@pytest.fixture(scope="session")
def tiny(tmp_path_factory) -> Tiny:
    return Tiny(tmp_path_factory.mktemp("fixtures"))


@pytest.fixture(scope="session", autouse=True)
def fixture_store(tiny):
    """The store that components reading finished runs (from_run, useful, unic) find their tiny
    parents in (``genlab.conformance.tiny.tiny_run``)."""
    with using_store(Store(tiny.root / "store")) as store:
        yield store


_specs: dict[tuple[str, str], RunSpec] = {}


def tiny_spec(tiny: Tiny, kind: str, name: str) -> RunSpec:
    if (kind, name) not in _specs:
        _specs[(kind, name)] = checks.check_tiny(tiny, kind, name)
    return _specs[(kind, name)]


def what(kind: str, name: str, spec: RunSpec) -> str:
    return f"{kind} {name!r} (with {spec.task.name}, {spec.model.name}, {spec.method.name})"


def test_every_kind_has_components():
    assert {k for k, _ in ALL} == {"task", "model", "method", "probe"}
    assert len(ALL) >= 60  # the registries were found and loaded


@pytest.mark.parametrize("kind,name", ALL, ids=map(ids, ALL))
def test_builds_tiny(tiny, kind, name):
    tiny_spec(tiny, kind, name)


@pytest.mark.parametrize("kind,name", TRAINED, ids=map(ids, TRAINED))
def test_one_step_trains(tiny, kind, name):
    spec = tiny_spec(tiny, kind, name)
    checks.check_step(spec, what(kind, name, spec))


@pytest.mark.parametrize("kind,name", TRAINED, ids=map(ids, TRAINED))
def test_same_seeds_same_step_bit_for_bit(tiny, kind, name):
    spec = tiny_spec(tiny, kind, name)
    checks.check_reproducible(spec, what(kind, name, spec))


@pytest.mark.parametrize("name", registry("method").names())
def test_method_step_honours_grad_clip(tiny, name):
    spec = tiny_spec(tiny, "method", name)
    checks.check_grad_clip(spec, what("method", name, spec))


@pytest.mark.parametrize("name", registry("task").names())
def test_task_data_matches_its_info(tiny, name):
    checks.check_task_data(tiny_spec(tiny, "task", name), name)


@pytest.mark.parametrize("name", registry("probe").names())
def test_probe_measures_without_side_effects(tiny, name):
    checks.check_probe(tiny_spec(tiny, "probe", name), name)


@pytest.mark.parametrize("kind,name", ALL, ids=map(ids, ALL))
def test_out_of_range_params_are_spec_errors_naming_the_field(tiny, kind, name):
    fields = checks.check_params_rejected(tiny_spec(tiny, kind, name), kind, name)
    assert fields[-1] == UNKNOWN_KEY


@pytest.mark.parametrize("kind,name", ALL, ids=map(ids, ALL))
def test_cli_exits_2_naming_the_field_and_writes_nothing(tiny, tmp_path, kind, name):
    spec = tiny_spec(tiny, kind, name)
    field, value = (invalid_values(registry(kind).get(name).params) or [(UNKNOWN_KEY, 1)])[0]
    d = spec.model_dump(mode="json")
    comp = d["eval"]["probes"][0] if kind == "probe" else d[kind]
    comp["params"] = {**comp["params"], field: value}
    f = tmp_path / "spec.json"
    f.write_text(json.dumps(d))
    store = tmp_path / "store"
    res = CliRunner().invoke(app, ["run", str(f), "--store", str(store), "-q", "--no-plot"])
    assert res.exit_code == 2, res.output
    assert field in res.output and not store.exists(), res.output


@pytest.mark.parametrize("kind,name", ALL, ids=map(ids, ALL))
def test_docstring_cites_the_registered_papers(kind, name):
    checks.check_docstring(kind, name)


@VMAP_ATTENTION
@pytest.mark.slow  # every task x model x method that builds: ~30 s on one core
@pytest.mark.parametrize("task", registry("task").names())
def test_every_combination_trains_or_is_refused_with_a_spec_error(tiny, task):
    tiny_spec(tiny, "task", task)
    outcomes = [checks.check_trains_or_refuses(spec) for spec in tiny.combinations(task)]
    assert any(o is None for o in outcomes), f"nothing trains on {task}: {outcomes}"


@VMAP_ATTENTION
@pytest.mark.slow  # every probe on every task: ~30 s on one core
@pytest.mark.parametrize("name", registry("probe").names())
def test_probe_on_every_task_measures_or_is_refused_with_a_spec_error(tiny, name):
    for spec in tiny.per_task(name):
        checks.check_trains_or_refuses(spec)
