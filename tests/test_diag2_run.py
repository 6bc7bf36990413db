"""The diagnostics probes attached to a run: their metrics land in the store."""

from __future__ import annotations

from genlab.claims.diag._common import digits_base
from genlab.engine import run_spec
from genlab.spec import parse_spec
from genlab.store import Store


def test_probes_in_a_run(tmp_path):
    probes = [
        {"name": "function_complexity", "params": {"grid": 8, "planes": 1}},
        {"name": "influence", "params": {"scope": "head", "max_samples": 64}},
    ]
    spec = parse_spec(
        {
            **digits_base(
                train_size=100,
                width=8,
                depth=1,
                lr=0.1,
                batch_size=50,
                steps=4,
                every=2,
                probes=probes,
                label_noise=0.3,
            ),
            "seed": 0,
            "data_seed": 0,
        }
    )
    store = Store(tmp_path)
    run_spec(spec, store, progress=False)
    m = store.metrics([spec.run_id])
    got = set(zip(m["split"], m["metric"], strict=True))
    for key in [
        ("model", "fourier_complexity"),
        ("model", "lz_complexity"),
        ("train/main", "self_influence_mean"),
        ("train/main", "self_influence_noise_auroc"),
    ]:
        assert key in got
    assert sorted(m["step"].unique()) == [0, 2, 4]
