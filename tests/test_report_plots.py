"""The run figure: step panels for every run, and a length-curve panel for length tasks."""

from __future__ import annotations

import matplotlib.image
import pandas as pd

from genlab.report.plots import plot_curves


def frame(splits: list[str]) -> pd.DataFrame:
    rows = [
        {"step": step, "split": split, "metric": metric, "value": 0.5}
        for step in (10, 100)
        for split in splits
        for metric in ("accuracy", "loss", "token_accuracy")
    ]
    return pd.DataFrame(rows)


def width(path) -> int:
    return matplotlib.image.imread(path).shape[1]


def test_length_runs_get_a_length_curve_panel(tmp_path):
    plain = plot_curves(frame(["train/main", "test/heldout"]), tmp_path / "a.png")
    lengths = frame(["train/main", "test/len_009", "test/len_012", "test/out_of_range"])
    with_curve = plot_curves(lengths, tmp_path / "b.png")
    assert width(with_curve) > 1.4 * width(plain)  # three panels instead of two
