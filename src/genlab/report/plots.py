"""Learning-curve figures from long-format metrics (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def save_figure(fig: plt.Figure, path: str | Path, dpi: int = 110) -> Path:
    """Lay out, write (creating folders) and close ``fig``; return its path."""
    path = Path(path)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def plot_curves(metrics: pd.DataFrame, path: str | Path, title: str = "") -> Path:
    """Accuracy and loss per split against step on a log axis: the canonical grokking figure.

    ``metrics`` is the store's long format (``step, split, metric, value``) for one run.
    """
    path = Path(path)
    panels = [m for m in ("accuracy", "loss") if m in set(metrics["metric"])]
    if not panels:
        raise ValueError("no accuracy or loss metrics to plot")
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False)
    data = metrics[metrics["step"] > 0]
    for ax, metric in zip(axes[0], panels, strict=True):
        for split, df in data[data["metric"] == metric].groupby("split", sort=True):
            df = df.sort_values("step")
            label = "train batches (running mean)" if split == "optim" else split
            ax.plot(df["step"], df["value"], label=label, lw=1.8)
        ax.set_xscale("log")
        ax.set_xlabel("optimisation step")
        ax.set_ylabel(metric)
        if metric == "loss":
            ax.set_yscale("log")
        else:
            ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3, which="both")
        ax.legend(frameon=False)
    if title:
        fig.suptitle(title)
    return save_figure(fig, path, dpi=120)
