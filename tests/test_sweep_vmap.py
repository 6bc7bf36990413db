"""The vmap executor's wider stacking: data and train fractions (a mask), shapes, divergence, the
transformer. Every case must give the numbers ``run_spec`` gives for each spec alone."""

from __future__ import annotations

import pytest

from genlab.engine import run_spec
from genlab.spec import parse_spec
from genlab.store import Store
from genlab.sweep import make_executor
from genlab.sweep.vmap import stack_groups
from tests.test_sweep_executors import _always_stack, assert_same_metrics, tiny  # noqa: F401


def check(tmp_path, specs, groups: int, capsys=None) -> Store:
    """Train ``specs`` with vmap and alone; metrics and statuses must agree."""
    assert len(stack_groups(specs)) == groups
    ref, got = Store(tmp_path / "ref"), Store(tmp_path / "vmap")
    for s in specs:
        run_spec(s, ref, progress=False)
    make_executor("vmap")(specs, got, False)
    assert_same_metrics(ref, got, [s.run_id for s in specs])
    return got


def frac(spec, f: float, p: int | None = None):
    d = spec.model_dump(mode="json")
    d["task"]["params"]["train_fraction"] = f
    if p is not None:
        d["task"]["params"]["p"] = p
    return parse_spec(d)


@pytest.mark.parametrize("batch", [None, 16])
def test_train_fractions_and_data_seeds_stack_as_one_group(tmp_path, batch, capsys):
    # full batch: splits of different sizes padded with masked rows; minibatch: ragged draws.
    # (Seeds and rates chosen away from a ReLU unit waking up, where Adam turns 1e-7 float noise
    # into a full step and no two implementations agree: seed 2 at lr 3e-3 does so at step 44.)
    specs = [
        frac(tiny(0, batch=batch), 0.3),
        frac(tiny(1, batch=batch), 0.5),
        frac(tiny(2, 2e-3, batch=batch), 0.7),
        frac(tiny(0, batch=batch), 1.0),
    ]
    check(tmp_path, specs, groups=1)
    assert "cannot be stacked" not in capsys.readouterr().err


def test_different_shapes_are_cut_into_stacked_parts(tmp_path, capsys):
    specs = [frac(tiny(s), 0.5, p) for p in (7, 11) for s in (0, 1)]  # p changes the vocabulary
    check(tmp_path, specs, groups=1)
    assert "cannot be stacked" not in capsys.readouterr().err


def test_a_loss_that_counts_padded_rows_is_caught_and_narrowed(tmp_path, monkeypatch, capsys):
    import torch.nn.functional as F

    from genlab.methods.erm import ERM

    def mean_of_all_rows(self, model, batches):  # no IGNORE mask: padding would change it
        ((x, y),) = batches.values()
        return F.cross_entropy(model(x), y.clamp(min=0), reduction="none").mean(), {}

    monkeypatch.setattr(ERM, "loss", mean_of_all_rows)
    # ordered pairs: every data seed gives a fraction the same size (the unordered split's size
    # varies with the diagonal pairs drawn), so each fraction stacks without padding
    specs = [frac(tiny(s, task_split="random"), f) for f in (0.4, 0.6) for s in (0, 1)]
    check(tmp_path, specs, groups=1)  # stacked per fraction after the check refused padding
    assert "cannot be stacked" not in capsys.readouterr().err


def test_divergence_is_found_at_its_own_step(tmp_path):
    specs = [tiny(0, lr=0.05, opt="sgd"), tiny(1, lr=1e4, opt="sgd"), tiny(2, lr=0.05, opt="sgd")]
    got = check(tmp_path, specs, groups=1)
    runs = got.runs().set_index("run_id")
    assert runs.loc[specs[1].run_id, "status"] == "diverged"
    assert runs.loc[specs[0].run_id, "status"] == runs.loc[specs[2].run_id, "status"] == "done"


def test_transformer_stacks(tmp_path, capsys):
    def tf(seed, lr):
        s = tiny(seed, lr=lr, batch=32, steps=20)
        d = s.model_dump(mode="json")
        d["model"] = {"name": "transformer", "params": {"d_model": 16, "n_heads": 2}}
        return parse_spec(d)

    check(tmp_path, [tf(0, 1e-3), tf(1, 3e-3)], groups=1)
    assert "cannot be stacked" not in capsys.readouterr().err


def test_parts_of_a_group_train_in_worker_processes(tmp_path):
    from genlab.sweep.vmap import chunks

    specs = [tiny(s, lr=lr, steps=20) for s in range(4) for lr in (1e-3, 2e-3)]
    assert [len(c) for c in chunks(stack_groups(specs), 2)] == [4, 4]
    assert [len(c) for c in chunks(stack_groups(specs[:7]), 2)] == [7]  # parts of >= 4 only
    ref, got = Store(tmp_path / "ref"), Store(tmp_path / "vmap")
    for s in specs:
        run_spec(s, ref, progress=False)
    out = make_executor("vmap", 2)(specs, got, False)
    assert sorted(o.run_id for o in out) == sorted(s.run_id for s in specs)
    assert {o.status for o in out} == {"done"}
    assert_same_metrics(ref, got, [s.run_id for s in specs])


@pytest.mark.parametrize("broken", [False, True])
def test_compiled_step_or_its_failure_keeps_the_numbers(tmp_path, monkeypatch, capsys, broken):
    import torch

    import genlab.sweep.vmap as vm
    from genlab.sweep import autocompile

    monkeypatch.setattr(vm, "COMPILE", True)  # GENLAB_VMAP_COMPILE=1
    # try compiling at once and keep it whatever the timing (GAIN), or a compile that fails
    monkeypatch.setattr(autocompile, "MIN_STEPS", 0)
    monkeypatch.setattr(autocompile, "WARM", 1)
    monkeypatch.setattr(autocompile, "TRIAL", 2)
    monkeypatch.setattr(autocompile, "GAIN", 1e9)
    if broken:

        def refuse(fn, **kw):
            def raising(*a, **k):
                raise RuntimeError("no compiler here")

            return raising

        monkeypatch.setattr(torch, "compile", refuse)
    check(tmp_path, [tiny(s, lr=lr, steps=30) for s, lr in [(0, 1e-3), (1, 2e-3)]], groups=1)
    err = capsys.readouterr().err
    assert ("failed (RuntimeError: no compiler here); eager kept" in err) == broken
    assert ("compiled kept" in err) == (not broken)


def test_speedup_leaves_the_replicas_untouched():
    import torch

    from genlab.engine.train import prepare
    from genlab.sweep.stacked import Stacked

    preps = [prepare(tiny(s, batch=16)) for s in range(3)]
    st = Stacked(preps, shared_data=False)
    flat, samplers = st.flat.detach().clone(), [repr(p.sampler.state_dict()) for p in preps]
    assert 0 < st.speedup(reps=1) < float("inf")
    assert torch.equal(st.flat, flat)
    assert [repr(p.sampler.state_dict()) for p in preps] == samplers


def test_slower_stacking_and_per_replica_evaluation_keep_the_numbers(tmp_path, monkeypatch, capsys):
    import genlab.sweep.vmap as vm
    from genlab.sweep.stacked import Stacked

    specs = [tiny(s, lr=lr) for s, lr in [(0, 1e-3), (1, 2e-3)]]
    real_init = Stacked.__init__

    def unfused(self, *a, **k):
        real_init(self, *a, **k)
        self.fuse_eval = False  # as when the replicas' own forwards time faster

    monkeypatch.setattr(Stacked, "__init__", unfused)
    check(tmp_path / "a", specs, groups=1)
    monkeypatch.setattr(vm, "SPEED_CHECK", True)
    monkeypatch.setattr(Stacked, "speedup", lambda self: 0.5)
    check(tmp_path / "b", specs, groups=1)
    assert (
        "slower than theirs one by one (0.50x); training them serially" in capsys.readouterr().err
    )


def test_specs_built_from_runs_read_the_executors_store(tmp_path, monkeypatch):
    """``from_run`` children stacked by vmap find their parent in the store they train into, not
    in the default store (``$GENLAB_STORE``, here empty)."""
    monkeypatch.setenv("GENLAB_STORE", str(tmp_path / "default"))
    store = Store(tmp_path / "runs")
    parent = run_spec(tiny(0), store, progress=False).run_id
    children = []
    for seed, lr in ((0, 1e-3), (1, 2e-3)):
        d = tiny(seed, lr).model_dump(mode="json")
        d["model"] = {"name": "from_run", "params": {"run": parent}}
        children.append(parse_spec(d))
    assert len(stack_groups(children)) == 1
    outcomes = make_executor("vmap")(children, store, False)
    assert {o.status for o in outcomes} == {"done"}, outcomes
    assert not (tmp_path / "default").exists()
