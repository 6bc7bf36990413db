"""``genlab export RUN|SWEEP --mlflow DIR --tensorboard DIR``: read back with MLflow's own client and
TensorBoard's event reader, every value equals the store's."""

from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

import genlab
from genlab.cli import app
from genlab.export import flat_params
from genlab.report.plots import plot_curves


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    st = genlab.Store(tmp_path_factory.mktemp("export") / "store")
    r = genlab.run("dg-colored", "steps=12", "eval.every=4", store=st)
    png = plot_curves(st.metrics(r.run_id), st.run_dir(r.run_id) / "curves.png", "t")
    st.add_artifact(r.run_id, "curves", png)
    genlab.sweep(
        {
            "name": "exp-sweep",
            "base": "dg-colored",
            "set": ["steps=8", "eval.every=4"],
            "grid": {"method.name": ["erm", "vrex"]},
        },
        store=st,
    )
    return st


def _export(store, ref, *opts):
    res = CliRunner().invoke(app, ["export", ref, "--store", str(store.root), *opts])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _store_values(store, run_id):
    m = store.metrics(run_id)
    return {
        (s, k): sorted(zip(g["step"], g["value"], strict=True))
        for (s, k), g in m.groupby(["split", "metric"])
    }


def test_mlflow_round_trip(store, tmp_path):
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    from genlab.export.mlflow import TAG, tracking_uri

    out = tmp_path / "mlruns"
    rid = store.runs()["run_id"].iloc[0]
    first = _export(store, rid[:6], "--mlflow", str(out))
    sweep = _export(store, "exp-sweep", "--mlflow", str(out))
    assert [d["skipped"] for d in first["mlflow"]] == [False]
    assert sweep["runs"] == 2 and not any(d["skipped"] for d in sweep["mlflow"])
    assert _export(store, rid, "--mlflow", str(out))["mlflow"][0]["skipped"]  # no duplicates

    client = MlflowClient(tracking_uri=tracking_uri(out))
    for exp_name, ids in (("genlab", [rid]), ("exp-sweep", [d["run_id"] for d in sweep["mlflow"]])):
        exp = client.get_experiment_by_name(exp_name)
        runs = client.search_runs([exp.experiment_id])
        assert sorted(r.data.tags[TAG] for r in runs) == sorted(ids)
        for mr in runs:
            gid = mr.data.tags[TAG]
            row = store.run(gid)
            assert mr.data.params == flat_params(row["spec"])
            assert mr.info.status == "FINISHED" and mr.data.tags["genlab.status"] == "done"
            keys = json.loads(
                open(
                    client.download_artifacts(
                        mr.info.run_id, "genlab/metric_keys.json", str(tmp_path)
                    )
                ).read()
            )
            want = _store_values(store, gid)
            assert {tuple(v) for v in keys.values()} == set(want)
            for key, (split, metric) in keys.items():
                hist = client.get_metric_history(mr.info.run_id, key)
                assert sorted((h.step, h.value) for h in hist) == want[(split, metric)]
            names = {a.path for a in client.list_artifacts(mr.info.run_id, "genlab")}
            assert names == {"genlab/spec.json", "genlab/metric_keys.json"}
    [mr] = client.search_runs([client.get_experiment_by_name("genlab").experiment_id])
    assert [a.path for a in client.list_artifacts(mr.info.run_id, "artifacts/curves")] == [
        "artifacts/curves/curves.png"
    ]
    assert "test/minus90pct/accuracy" not in keys and any("pct" in k for k in keys)


def test_tensorboard_round_trip(store, tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.util import tensor_util

    out = tmp_path / "tb"
    done = _export(store, "exp-sweep", "--tensorboard", str(out))
    _export(store, "exp-sweep", "--tensorboard", str(out))  # again: replaces, no duplicates
    assert len(done["tensorboard"]) == 2
    for d in done["tensorboard"]:
        acc = EventAccumulator(d["path"], size_guidance={"tensors": 0})
        acc.Reload()
        want = _store_values(store, d["run_id"])
        tags = set(acc.Tags()["tensors"]) - {"genlab/spec/text_summary"}
        assert tags == {f"{s}/{m}" for s, m in want}
        for (split, metric), values in want.items():
            got = [
                (e.step, float(tensor_util.make_ndarray(e.tensor_proto)))
                for e in acc.Tensors(f"{split}/{metric}")
            ]
            assert sorted(got) == values  # double precision: equal, not close


def test_missing_extra_and_unknown_ref_exit_2(store, tmp_path, monkeypatch):
    res = CliRunner().invoke(
        app, ["export", "nope", "--store", str(store.root), "--tensorboard", str(tmp_path / "tb")]
    )
    assert res.exit_code == 2 and "no sweep or run matching 'nope'" in res.output
    monkeypatch.setitem(sys.modules, "mlflow.tracking", None)
    res = CliRunner().invoke(
        app, ["export", "exp-sweep", "--store", str(store.root), "--mlflow", str(tmp_path / "ml")]
    )
    assert res.exit_code == 2 and "pip install 'genlab[mlflow]'" in " ".join(res.output.split())
