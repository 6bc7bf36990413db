"""Learning-curve figures from long-format metrics (matplotlib, no display needed)."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd


def save_figure(fig: plt.Figure, path: str | Path, dpi: int = 110) -> Path:
    """Lay out, write (creating folders) and close ``fig``; return its path."""
    path = Path(path)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def split_length(split: str) -> int | None:
    """``test/len_017`` -> 17 (the per-length test splits of the length tasks); else None."""
    name = split.rpartition("/")[2]
    return int(name[4:]) if name.startswith("len_") and name[4:].isdigit() else None


def plot_curves(metrics: pd.DataFrame, path: str | Path, title: str = "") -> Path:
    """Accuracy and loss per split against step on a log axis: the canonical grokking figure.

    ``metrics`` is the store's long format (``step, split, metric, value``) for one run. Runs of
    length tasks (splits ``test/len_NNN``) get a third panel instead of a line per length: the
    length curve, sequence and token accuracy against test length at the last evaluation.
    """
    path = Path(path)
    length = metrics["split"].map(split_length)
    by_length, metrics = metrics[length.notna()], metrics[length.isna()]
    panels = [m for m in ("accuracy", "loss") if m in set(metrics["metric"])]
    if not panels:
        raise ValueError("no accuracy or loss metrics to plot")
    extra = int(not by_length.empty)
    fig, axes = plt.subplots(
        1, len(panels) + extra, figsize=(5.5 * (len(panels) + extra), 4), squeeze=False
    )
    data = metrics[metrics["step"] > 0]
    for ax, metric in zip(axes[0], panels, strict=False):
        for split, df in data[data["metric"] == metric].groupby("split", sort=True):
            df = df.sort_values("step")
            label = "train batches (running mean)" if split == "optim" else split
            marker = "o" if len(df) < 5 else None  # a lone evaluation still shows
            ax.plot(df["step"], df["value"], label=label, lw=1.8, marker=marker, ms=4)
        ax.set_xscale("log")
        ax.set_xlabel("optimisation step")
        ax.set_ylabel(metric)
        if metric == "loss":
            ax.set_yscale("log")
        else:
            ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3, which="both")
        ax.legend(frameon=False)
    if extra:
        _plot_length_curve(axes[0][-1], by_length)
    if title:
        fig.suptitle(title)
    return save_figure(fig, path, dpi=120)


def _plot_length_curve(ax: plt.Axes, by_length: pd.DataFrame) -> None:
    last = by_length[by_length["step"] == by_length["step"].max()]
    last = last[last["metric"].isin(["accuracy", "token_accuracy"])]
    for metric, df in last.groupby("metric", sort=True):
        df = df.assign(length=df["split"].map(split_length)).sort_values("length")
        ax.plot(df["length"], df["value"], "o-", ms=3, label=metric)
    ax.set(xlabel="test length", ylabel="accuracy at the last evaluation", ylim=(-0.02, 1.02))
    ax.set_title(f"length curve (step {int(last['step'].max())})", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(frameon=False)


def gap_scatter(
    models: pd.DataFrame, names: list[str], table: pd.DataFrame | None, path: Path, title: str
) -> Path:
    """A model zoo's generalization gap against each measure (``genlab.zoo``), with tau and the CMI score (from ``table``, if given) in the
    panel titles."""
    names = [n for n in names if n in models.columns]
    cols = min(3, max(1, len(names)))
    rows = math.ceil(len(names) / cols) or 1
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.3 * rows), squeeze=False)
    stats = table.set_index("measure") if table is not None else None
    for ax, name in zip(axes.flat, names, strict=False):
        ax.scatter(models[name], models["gap"], s=18)
        ax.set(xlabel=name, ylabel="gap (train - test acc)")
        if stats is not None:
            ax.set_title(f"tau={stats.loc[name, 'tau']:.2f} cmi={stats.loc[name, 'cmi']:.3f}")
    for ax in list(axes.flat)[len(names) :]:
        ax.axis("off")
    fig.suptitle(title)
    return save_figure(fig, path, dpi=100)
