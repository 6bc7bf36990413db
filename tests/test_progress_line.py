"""The progress line fits the terminal: at 80 columns the step count and the ETA stay visible and
the live metrics are cut first (whole items); at 140 the metrics show. A sweep's line reads
``run k/N · method=mixup seed=1``; a resumed run says ``resumed from step 250``."""

from __future__ import annotations

import io
import time

import pytest
from rich.console import Console

from genlab.engine import run_spec
from genlab.engine.progress import RunProgress, fit, labelled, run_label, widths
from genlab.sweep import multirun, plan
from genlab.sweep.runner import run_sweep
from genlab.sweep.serial import serial

ACC = {
    (s, "accuracy"): v
    for s, v in [
        ("train/+90%", 0.912),
        ("train/+80%", 0.887),
        ("val/+90%", 0.91),
        ("val/+80%", 0.88),
        ("test/-90%", 0.102),
    ]
}
LABELS = {
    "r1": {"method.name": "erm", "seed": 0, "data_seed": 0},
    "r2": {"method.name": "mixup", "seed": 1, "data_seed": 1},
}


def _line(width: int, start: int = 0, run_id: str | None = None) -> tuple[str, str]:
    """The rendered line after a few steps, and what was printed above it."""
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=False)
    with labelled(LABELS):
        bar = RunProgress("colored_digits · mlp", 1000, start, True, run_id=run_id, console=console)
    with bar:
        bar.advance(start + 100)
        bar.show(ACC)
        time.sleep(0.05)
        bar.advance(start + 120)
        text = bar.render()
    return text.rstrip("\n"), out.getvalue()


@pytest.mark.parametrize("width", [80, 140])
def test_step_count_and_eta_stay_visible(width):
    text, _ = _line(width, run_id="r2")
    assert "\n" not in text and len(text) <= width
    assert "120/1000" in text and "eta " in text
    assert text.startswith("run 2/2 · method=mixup seed=1")
    if width == 80:  # the metrics go first: none fits beside the rest
        assert "acc" not in text
    else:  # whole items, then an ellipsis
        assert "acc test/-90% 0.102  train/+80% 0.887" in text and text.endswith("…")


def test_a_narrow_terminal_keeps_the_count_and_the_eta():
    text, _ = _line(44, run_id="r1")
    assert "120/1000" in text and "eta " in text and len(text) <= 44


def test_a_resumed_run_says_so():
    _, above = _line(80, start=250)
    assert "colored_digits · mlp: resumed from step 250" in above
    _, above = _line(80, start=0)
    assert "resumed" not in above


def test_widths_cut_the_metrics_first_then_the_bar_then_the_description():
    desc = "run 12/40 · method=mixup seed=1"
    metrics = "acc a 0.100  b 0.200  c 0.300"
    assert widths(200, desc, 30, metrics) == (len(desc), 24, len(metrics))
    d, b, m = widths(80, desc, 32, metrics)
    assert (d, m) == (len(desc), len(fit(metrics, 80 - 32 - len(desc) - 8))) and b >= 8
    assert widths(60, desc, 32, metrics) == (20, 8, 0)
    assert fit(metrics, 14) == "acc a 0.100 …" and fit(metrics, 5) == ""
    assert (
        run_label({"method.name": "sd", "seed": 2, "data_seed": 5})
        == "method=sd seed=2 data_seed=5"
    )


def test_a_sweep_labels_each_run_and_the_engine_reads_it(tmp_path, monkeypatch):
    """``run_sweep`` installs the labels; the engine's line of each run reads its own."""
    from genlab.engine import progress

    seen = []
    real = progress.RunProgress.__init__

    def spy(self, title, total, start=0, enabled=True, run_id=None, **kw):
        real(self, title, total, start, enabled, run_id=run_id, **kw)
        seen.append(self.title)

    monkeypatch.setattr(progress.RunProgress, "__init__", spy)
    sw = multirun(
        "grokking",
        [
            "task.p=11",
            "steps=4",
            "batch_size=100000",
            'model.name="mlp"',
            "model.params={}",
            "eval.every=2",
            "stop=[]",
            "optimizer.lr=1e-3,3e-3",
        ],
    )
    from genlab.store import Store

    run_sweep(sw, Store(tmp_path / "s"), serial, progress=True)
    assert seen == ["run 1/2 · optimizer.lr=0.001 seed=0", "run 2/2 · optimizer.lr=0.003 seed=0"]
    with labelled({}):  # outside a sweep: the task and the model
        spec = plan(sw)[0]["spec"]
        seen.clear()
        run_spec(spec.model_copy(update={"steps": 2}), Store(tmp_path / "t"), progress=True)
    assert seen == ["modular_arithmetic · mlp"]


def test_an_interrupted_run_resumes_saying_from_which_step(tmp_path, tiny_spec, capsys):
    from genlab.store import Store

    def stop(step, metrics):
        if step == 40:
            raise KeyboardInterrupt

    store = Store(tmp_path / "s")
    with pytest.raises(KeyboardInterrupt):
        run_spec(tiny_spec, store, progress=False, on_eval=stop)
    capsys.readouterr()
    result = run_spec(tiny_spec, store, progress=True)
    assert result.resumed_from == 20 and result.status == "done"  # the checkpoint before 40
    assert "modular_arithmetic · mlp: resumed from step 20" in capsys.readouterr().err
