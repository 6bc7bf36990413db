"""Federated graph runs as RunSpecs (``genlab.fed.graph_spec``, the run kind of ``fed.fedlog``,
#78): validated at the edge, kept out of the generic registries (so out of the conformance
matrix, by declaration), and trained for real through the store, resumable round by round."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from genlab.cli import app
from genlab.conformance import components
from genlab.errors import SpecError
from genlab.fed.graph_spec import GRAPH_METHODS, GRAPH_MODELS, GRAPH_TASKS, is_graph
from genlab.models import MODELS
from genlab.spec import parse_spec, set_path
from genlab.store import Store
from genlab.tasks import TASKS

TINY = {
    "task": {"name": "sbm_graphs", "params": {"nodes": 60, "new_nodes": 30}},
    "model": {"name": "gcn", "params": {"hidden": 8}},
    "method": {"name": "fedlog"},
    "optimizer": {"name": "adam", "lr": 0.01, "weight_decay": 5e-4},
    "steps": 3,
    "eval": {"probes": []},
    "fed": {"clients": 2, "alpha": 0.1, "local_steps": 5},
}


def test_graph_components_stay_out_of_the_generic_registries_and_conformance() -> None:
    """Declared in ``graph_spec``: a Split has no adjacency, so the graph task and the GCN are
    not ``genlab.tasks``/``genlab.models`` components and the conformance matrix never sees them."""
    assert not set(GRAPH_TASKS.names()) & set(TASKS.names())
    assert not set(GRAPH_MODELS.names()) & set(MODELS.names())
    seen = {name for _, name in components()}
    assert not (set(GRAPH_TASKS.names()) | set(GRAPH_MODELS.names())) & seen
    assert GRAPH_METHODS.names() == ["fedavg", "fedlog"]
    assert is_graph("sbm_graphs") and not is_graph("digits")


def test_graph_spec_fills_defaults_and_hashes_stably() -> None:
    spec = parse_spec(TINY)
    assert spec.method.params == {"min_nodes": 5, "per_class": 20, "weight": 1.0}
    assert spec.task.params["classes"] == 5 and spec.model.params == {"hidden": 8}
    assert parse_spec(json.loads(spec.canonical_json())).run_id == spec.run_id


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [
        ("fed", None, "fed table"),
        ("eval.probes", [{"name": "accuracy"}], "eval.probes"),
        ("fed.skew", "iid", "fed.skew"),
        ("batch_size", 16, "batch_size"),
        ("stop", [{"split": "fed", "threshold": 0.9}], "stop"),
        ("model.name", "mlp", "mlp"),
        ("method.name", "fedprox", "fedprox"),
        ("task.nodes", 1, "task.params.nodes"),
        ("method.per_class", 0, "method.params.per_class"),
    ],
)
def test_bad_graph_specs_are_spec_errors_naming_the_field(key, value, field) -> None:
    data = set_path(TINY, key, value)
    if value is None:
        data.pop(key)
    with pytest.raises(SpecError, match=field.replace(".", r"\.")):
        parse_spec(data)


def test_cli_refuses_a_bad_graph_spec_with_exit_2_and_writes_nothing(tmp_path) -> None:
    f = tmp_path / "graph.json"
    f.write_text(json.dumps(TINY))
    store = tmp_path / "store"
    res = CliRunner().invoke(
        app, ["run", str(f), "task.nodes=1", "--store", str(store), "-q", "--no-plot"]
    )
    assert res.exit_code == 2 and "task.params.nodes" in res.output, res.output
    assert not store.exists()


def test_tiny_graph_run_goes_through_the_store_and_resumes(tmp_path) -> None:
    pytest.importorskip("flwr", reason="pip install 'genlab[fl]'")
    from genlab.engine import run_spec

    spec = parse_spec(TINY)
    f = tmp_path / "graph.json"
    f.write_text(json.dumps(TINY))
    out = CliRunner().invoke(app, ["run", str(f), "--store", str(tmp_path / "whole"), "-q"])
    assert out.exit_code == 0, out.output  # trained, stored and plotted (accuracy curves)
    whole = Store(tmp_path / "whole")
    res = run_spec(spec, whole, progress=False)
    assert res.skipped and res.status == "done" and res.step == 3  # the same spec: a no-op
    assert (whole.run_dir(spec.run_id) / "curves.png").exists()
    m = whole.metrics(spec.run_id)
    assert set(m[m["step"] == 0]["split"]) == {"global/own", "global/unseen"}
    last = m[m["step"] == 3]
    last = dict(zip(last["split"] + ":" + last["metric"], last["value"], strict=True))
    for k in (
        "local/unseen:accuracy",
        "local/own:accuracy",
        "global/unseen:accuracy",
        "global/own:accuracy",
        "fed:local_unseen_worst",
        "client/1:local_unseen",
    ):
        assert 0 <= last[k] <= 1, k

    def kill(rnd: int, _metrics: object) -> None:
        if rnd == 2:
            raise KeyboardInterrupt

    killed = Store(tmp_path / "killed")
    with pytest.raises(KeyboardInterrupt):
        run_spec(spec, killed, progress=False, on_eval=kill)
    assert killed.status(spec.run_id) == "interrupted"
    again = run_spec(spec, killed, progress=False)
    assert again.resumed_from == 2 and again.final == res.final
