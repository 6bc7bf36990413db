"""The weight-space path figure: accuracy (and loss) per split against the interpolation weight."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from genlab.report.plots import plt, save_figure


def plot_weight_path(
    table: pd.DataFrame, path: str | Path, title: str = "", labels: tuple[str, str] = ("A", "B")
) -> Path:
    """Two panels (accuracy, loss) with one line per split against ``lam``; ``lam = 0`` is run
    ``labels[0]``, ``lam = 1`` run ``labels[1]``. ``table`` has ``lam, split, accuracy, loss``."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, metric in zip(axes, ("accuracy", "loss"), strict=True):
        for split, df in table.groupby("split", sort=True):
            style = "--" if split.startswith("train/") else "-"
            ax.plot(df["lam"], df[metric], style, marker="o", ms=3, lw=1.6, label=split)
        ax.set_xlabel(f"lambda  (0 = {labels[0]}, 1 = {labels[1]})")
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
        if metric == "accuracy":
            ax.set_ylim(-0.02, 1.02)
    axes[0].legend(frameon=False, fontsize=8)
    if title:
        fig.suptitle(title)
    return save_figure(fig, path)
