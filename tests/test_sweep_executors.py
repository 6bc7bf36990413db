"""Executors give the numbers ``run_spec`` gives: serial, pool and vmap (stacked with torch.func)."""

from __future__ import annotations

import pandas as pd
import pytest

from genlab.engine import run_spec
from genlab.spec import load_spec_file, parse_spec
from genlab.store import Store
from genlab.sweep import make_executor, parse_sweep, plan
from genlab.sweep.vmap import stack_groups

KEYS = ["run_id", "step", "split", "metric"]


@pytest.fixture(autouse=True)
def _always_stack(monkeypatch):
    """Stack whatever the timing (vmap's speed check would make these tests depend on the load)."""
    import genlab.sweep.vmap as vm

    monkeypatch.setattr(vm, "SPEED_CHECK", False)


def tiny(seed=0, lr=1e-3, wd=1.0, opt="adamw", batch=None, steps=50, task_split="auto", **extra):
    d = load_spec_file("grokking")
    d["model"] = {"name": "mlp", "params": {"width": 32, "embed_dim": 8, **extra.pop("model", {})}}
    # the setting the seeds were chosen at
    d["task"]["params"].update(p=11, train_fraction=0.5, split=task_split)
    d["optimizer"].update(name=opt, lr=lr, weight_decay=wd, momentum=0.9 if opt == "sgd" else 0)
    d.update(steps=steps, batch_size=batch, seed=seed, data_seed=seed, stop=[], checkpoint_every=20)
    d.update(extra)
    d["eval"] = {"every": 10, "log_points": 5}
    return parse_spec(d)


def assert_same_metrics(a: Store, b: Store, ids: list[str], atol=2e-5) -> None:
    ma, mb = a.metrics(ids), b.metrics(ids)
    m = ma.merge(mb, on=KEYS, how="outer", indicator=True)
    assert (m["_merge"] == "both").all(), m[m["_merge"] != "both"].head()
    diff = (m["value_x"] - m["value_y"]).abs()
    tol = atol + 1e-4 * m["value_x"].abs()
    assert (diff <= tol).all(), m[diff > tol].head()
    ra = a.runs().set_index("run_id").loc[ids, ["status", "step"]]
    rb = b.runs().set_index("run_id").loc[ids, ["status", "step"]]
    pd.testing.assert_frame_equal(ra, rb)


@pytest.mark.parametrize(
    "variant",
    [
        {},  # full batch, AdamW
        {"batch": 16},  # minibatches: each replica has its own batch order
        {"opt": "sgd", "batch": 32},
        {"opt": "adam"},
    ],
)
def test_vmap_equals_run_spec_alone(tmp_path, variant):
    specs = [
        tiny(0, 1e-3, 1.0, **variant),
        tiny(1, 1e-3, 1.0, **variant),
        tiny(2, 3e-3, 0.1, **variant),
        tiny(0, 1e-2, 0.0, **variant),
    ]
    assert len(stack_groups(specs)) == 1
    ref, got = Store(tmp_path / "ref"), Store(tmp_path / "vmap")
    for s in specs:
        run_spec(s, ref, progress=False)
    out = make_executor("vmap")(specs, got, False)
    assert [o.status for o in out] == ["done"] * 4
    assert_same_metrics(ref, got, [s.run_id for s in specs])


def test_vmap_stop_rules_per_replica(tmp_path):
    stop = [{"split": "train/main", "metric": "accuracy", "threshold": 0.3}]
    specs = [tiny(s, lr=lr, stop=stop) for s, lr in [(0, 1e-2), (1, 1e-4)]]
    ref, got = Store(tmp_path / "ref"), Store(tmp_path / "vmap")
    for s in specs:
        run_spec(s, ref, progress=False)
    make_executor("vmap")(specs, got, False)
    steps = ref.runs().set_index("run_id").loc[[s.run_id for s in specs], "step"].tolist()
    assert steps[0] < steps[1]  # the fast one stopped early; the point of the check
    assert_same_metrics(ref, got, [s.run_id for s in specs])


def test_vmap_falls_back_to_serial_with_a_message(tmp_path, capsys):
    specs = [tiny(s, model={"dropout": 0.1}, steps=10) for s in range(2)]
    got = Store(tmp_path / "vmap")
    out = make_executor("vmap")(specs, got, False)
    assert [o.status for o in out] == ["done", "done"]
    assert "uses dropout" in capsys.readouterr().err
    ref = Store(tmp_path / "ref")
    for s in specs:
        run_spec(s, ref, progress=False)
    assert_same_metrics(ref, got, [s.run_id for s in specs], atol=0)


def test_vmap_resumes_engine_checkpoints_and_engine_resumes_vmap(tmp_path, monkeypatch):
    specs = [tiny(s, lr=lr) for s, lr in [(0, 1e-3), (1, 3e-3), (2, 1e-2)]]
    ids = [s.run_id for s in specs]
    ref = Store(tmp_path / "ref")
    for s in specs:
        run_spec(s, ref, progress=False)

    # engine interrupted at step 30 (checkpoint at 20), then vmap finishes the group
    a = Store(tmp_path / "a")

    def stop_at_30(step, _):
        if step >= 30:
            raise KeyboardInterrupt

    for s in specs:
        with pytest.raises(KeyboardInterrupt):
            run_spec(s, a, progress=False, on_eval=stop_at_30)
    assert set(a.runs()["status"]) == {"interrupted"}
    make_executor("vmap")(specs, a, False)
    assert_same_metrics(ref, a, ids)

    # vmap interrupted after its checkpoint at step 40, then the engine finishes each run
    import genlab.sweep.vmap as vm

    b = Store(tmp_path / "b")
    real = vm.evaluate

    def boom(prep, step, logits=None):
        if step > 40:
            raise KeyboardInterrupt
        return real(prep, step, logits)

    monkeypatch.setattr(vm, "evaluate", boom)
    with pytest.raises(KeyboardInterrupt):
        make_executor("vmap")(specs, b, False)
    monkeypatch.setattr(vm, "evaluate", real)
    assert set(b.runs()["status"]) == {"interrupted"}
    for s in specs:
        assert run_spec(s, b, progress=False).resumed_from == 40
    assert_same_metrics(ref, b, ids)


def test_three_methods_three_seeds_same_numbers_with_each_executor(tmp_path):
    sweep = parse_sweep(
        {
            "name": "methods",
            "base": "grokking",
            "seeds": 3,
            "unset": ["batch_size", "stop"],
            "set": [
                "task.p=11",
                "model.name='mlp'",
                "model.width=32",
                "model.embed_dim=8",
                "steps=30",
                "eval.every=10",
                "eval.log_points=3",
            ],
            "grid": {"method.name": ["erm", "groupdro", "perpgrad"]},
        }
    )
    specs = [p["spec"] for p in plan(sweep)]
    ids = [s.run_id for s in specs]
    assert len(ids) == 9
    stores = {}
    for name, workers in [("serial", None), ("pool", 2), ("vmap", None)]:
        stores[name] = Store(tmp_path / name)
        out = make_executor(name, workers)(specs, stores[name], False)
        assert sorted(o.run_id for o in out) == sorted(ids)
        assert {o.status for o in out} == {"done"}, out
        again = make_executor(name, workers)(specs, stores[name], False)
        assert {o.status for o in again} == {"skipped"}  # nothing is trained twice
    assert_same_metrics(stores["serial"], stores["pool"], ids, atol=0)
    assert_same_metrics(stores["serial"], stores["vmap"], ids)


def test_claims_run_with_a_named_executor(tmp_path):
    from genlab.claims import CLAIMS
    from genlab.claims.runner import run_claim

    claim = CLAIMS.get("grokking.delayed_generalization").obj
    cfg = {"p": 11, "model": "mlp", "steps": 20, "batch_size": None}
    a = run_claim(
        claim, Store(tmp_path / "a"), "smoke", cfg, progress=False, execute="vmap", controls=False
    )
    b = run_claim(claim, Store(tmp_path / "b"), "smoke", cfg, progress=False, controls=False)
    assert a.run_ids == b.run_ids and a.decision == b.decision == "not reproduced"
    assert a.statistic == pytest.approx(b.statistic, nan_ok=True, rel=1e-4)


def test_pending_skips_finished_and_resumes_dead_running(tmp_path):
    from genlab.sweep.base import pending

    specs = [tiny(s, steps=5) for s in range(4)]
    store = Store(tmp_path / "s")
    for s, status in zip(specs[:3], ["done", "diverged", "running"], strict=True):
        store.begin(s.run_id, s.canonical_json())
        if status != "running":
            store.finish(s.run_id, status, 5, 0.1)
    with store._write() as c:  # a dead process left specs[2] running
        c.execute("UPDATE runs SET pid=? WHERE run_id=?", (2**22 + 12345, specs[2].run_id))
    todo, skipped = pending(specs, store)
    assert [s.run_id for s in todo] == [specs[2].run_id, specs[3].run_id]
    assert [(o.status, o.error) for o in skipped] == [("skipped", None), ("skipped", "diverged")]
