"""Checkpoints that survive damage: the previous one is kept, a damaged last one falls back to it
with a warning naming the file, none usable is a clear error, and ``--restart`` starts over."""

from __future__ import annotations

import zipfile

import pandas as pd
import pytest
import torch
from typer.testing import CliRunner

from genlab.cli import app
from genlab.engine import checkpoint, run_spec
from genlab.engine.checkpoint import CheckpointError, CheckpointWarning
from genlab.spec import load_run_spec
from genlab.store import Store
from tests.conftest import TINY

ARGS = [*TINY, "steps=100", "checkpoint_every=20"]


def _truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _flip(path):
    """Flip one byte inside a tensor record: torch.load reads it without complaint."""
    with zipfile.ZipFile(path) as z:
        info = next(i for i in z.infolist() if "/data/" in i.filename)
    data = bytearray(path.read_bytes())
    data[info.header_offset + 200] ^= 0xFF  # past the local header, inside the 256 tensor bytes
    path.write_bytes(bytes(data))
    torch.load(path, weights_only=True)  # the damage torch alone does not see


def test_save_keeps_the_previous_checkpoint(tmp_path):
    path = tmp_path / checkpoint.RESUME
    checkpoint.save(path, {"step": 1})
    checkpoint.save(path, {"step": 2})
    assert checkpoint.load(path)["step"] == 2
    assert checkpoint.load(checkpoint.previous(path))["step"] == 1
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("damage", [_truncate, _flip])
def test_a_damaged_last_checkpoint_falls_back_to_the_previous(tmp_path, damage):
    path = tmp_path / checkpoint.RESUME
    checkpoint.save(path, {"step": 1, "w": torch.arange(64.0)})
    checkpoint.save(path, {"step": 2, "w": torch.arange(64.0)})
    damage(path)
    with pytest.warns(CheckpointWarning, match=f"{path} is damaged.*resumed from last.prev.pt"):
        assert checkpoint.load(path)["step"] == 1
    assert not path.exists() and (tmp_path / "last.pt.damaged").exists()  # kept, set aside


def test_no_usable_checkpoint_is_an_error_naming_the_files(tmp_path):
    path = tmp_path / checkpoint.RESUME
    checkpoint.save(path, {"step": 1})
    checkpoint.save(path, {"step": 2})
    _truncate(path)
    _truncate(checkpoint.previous(path))
    with pytest.raises(CheckpointError, match="--restart") as err:
        checkpoint.load(path)
    assert str(path) in str(err.value) and str(checkpoint.previous(path)) in str(err.value)
    assert err.value.exit_code == 2
    assert checkpoint.load(tmp_path / "none.pt") is None  # nothing saved: start afresh


def _stop_at(step):
    def on_eval(at, _metrics):
        if at == step:
            raise KeyboardInterrupt

    return on_eval


def _interrupted(tmp_path):
    """A run interrupted at step 60 (checkpoints of steps 40 and 20 on disk) and a reference."""
    spec = load_run_spec("grokking", ARGS)
    ref = Store(tmp_path / "ref")
    want = run_spec(spec, ref, progress=False)
    store = Store(tmp_path / "store")
    with pytest.raises(KeyboardInterrupt):
        run_spec(spec, store, progress=False, on_eval=_stop_at(60))
    assert store.status(spec.run_id) == "interrupted"
    return spec, store, ref, want


def test_resume_from_the_previous_checkpoint_matches_an_uninterrupted_run(tmp_path):
    spec, store, ref, want = _interrupted(tmp_path)
    last = store.run_dir(spec.run_id) / checkpoint.RESUME
    _truncate(last)
    with pytest.warns(CheckpointWarning, match=str(last)):
        got = run_spec(spec, store, progress=False)
    assert got.resumed_from == 20 and got.final == want.final
    pd.testing.assert_frame_equal(store.metrics(spec.run_id), ref.metrics(spec.run_id))


def test_no_usable_checkpoint_exits_2_then_restart_replaces_the_run(tmp_path):
    spec, store, ref, want = _interrupted(tmp_path)
    run_dir = store.run_dir(spec.run_id)
    for p in (run_dir / checkpoint.RESUME, checkpoint.previous(run_dir / checkpoint.RESUME)):
        _truncate(p)
    store.log_metrics(spec.run_id, [(7, "train/main", "accuracy", -1.0)])  # must not survive
    args = ["run", "grokking", *ARGS, "--store", str(store.root), "-q", "--no-plot"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2
    assert "last.pt is damaged" in res.output and "--restart" in res.output
    assert Store(store.root).status(spec.run_id) == "interrupted"  # not left running
    res = CliRunner().invoke(app, [*args, "--restart"])
    assert res.exit_code == 0, res.output
    store = Store(store.root)
    assert store.run(spec.run_id)["summary"]["final"] == want.final
    pd.testing.assert_frame_equal(store.metrics(spec.run_id), ref.metrics(spec.run_id))
    assert not list(run_dir.glob("last*"))  # checkpoints of a finished run are removed


def test_restart_of_a_finished_run_trains_it_again(store, tiny_spec):
    first = run_spec(tiny_spec, store, progress=False)
    again = run_spec(tiny_spec, store, progress=False, restart=True)
    assert not again.skipped and again.final == first.final
