"""The probe zoo: validation (exit 2, nothing written), the scores, and a tiny end-to-end zoo."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from genlab.cli import app
from genlab.store import Store
from genlab.zoo import ZooConfig, cmi_score, kendall_tau, rank_measures, run_zoo, zoo_specs

runner = CliRunner()


@pytest.mark.parametrize(
    "data, match",
    [
        ({"size": 2, "vary": {"width": [8, 16], "lr": [1e-3], "depth": [1]}}, "size"),
        ({"vary": {"colour": [1, 2]}}, "unknown hyperparameter"),
        ({"probes": ["gwa", "nope"]}, "unknown probe"),
        ({"vary": {"width": []}}, "needs >= 1 value"),
    ],
)
def test_bad_zoo_config(data, match):
    with pytest.raises(ValueError, match=match):
        ZooConfig.model_validate(data)


@pytest.mark.parametrize(
    "args",
    [
        ["--size", "2"],  # seven hyperparameters vary by default
        ["--probes", "gwa,nope"],
        ["--vary", "colour=1,2"],
        ["--vary", "width"],
    ],
)
def test_cli_bad_input_exits_2_and_writes_nothing(tmp_path, args):
    res = runner.invoke(app, ["zoo", *args, "--store", str(tmp_path / "s")])
    assert res.exit_code == 2, res.output
    assert not (tmp_path / "s").exists()


def test_scores():
    rng = np.random.default_rng(0)
    n = 24
    hps = pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.integers(0, 2, n)})
    gap = hps["a"] * 0.1 + hps["b"] * 0.03 + rng.normal(0, 0.01, n)
    g = gap.to_numpy()
    assert kendall_tau(g, g)[0] == pytest.approx(1.0)
    assert kendall_tau(-g, g)[0] == pytest.approx(-1.0)
    assert cmi_score(np.exp(g), g, hps) == pytest.approx(1.0)  # monotone: same order
    assert cmi_score(-g, g, hps) == pytest.approx(1.0)  # sign does not matter to MI
    assert np.isnan(kendall_tau(np.ones(n), g)[0])
    assert cmi_score(np.ones(n), g, hps) == pytest.approx(0.0)
    # a random measure scores well below a perfect one (plug-in estimates are biased upwards)
    noise = np.mean([cmi_score(rng.normal(size=n), g, hps) for _ in range(5)])
    assert noise < 0.5
    table = rank_measures(pd.DataFrame({"good": g, "bad": rng.normal(size=n)}), gap, hps)
    assert list(table["measure"]) == ["good", "bad"]


def test_tiny_zoo_end_to_end(tmp_path):
    cfg = ZooConfig(
        size=3,
        vary={"width": [8, 16, 32]},
        steps=15,
        train_size=100,
        probes=["gwa", "coherence", "weight_norm"],
    )
    store = Store(tmp_path)
    res = run_zoo(cfg, store)
    assert len(res.models) == 3
    assert set(res.table["probe"]) == {"gwa", "coherence", "weight_norm"}
    assert {"gwa", "coherence", "weight_norm"} <= set(res.table["measure"])
    assert all(p.is_file() for p in res.figures.values())
    assert (res.out_dir / "table.csv").is_file()
    ids = [s.run_id for _, s in zoo_specs(cfg)]
    assert set(store.runs()["run_id"]) == set(ids)
    for row in res.models.itertuples():  # the gap of each model, from its run's own final record
        final = store.run(row.run_id)["summary"]["final"]
        gap = final["train/main:accuracy"] - final["test/heldout:accuracy"]
        assert row.gap == pytest.approx(gap, abs=1e-12), row.run_id
    again = run_zoo(cfg, store)  # every run is done: nothing retrained, same table
    pd.testing.assert_frame_equal(again.table, res.table)
