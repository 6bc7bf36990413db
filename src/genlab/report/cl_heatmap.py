"""The heat map of a continual run's accuracy matrix R[i, j] (trained on i, tested on j):
forgetting reads as the fading below the diagonal (Model Zoo #120, fast/slow weights #95)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from genlab.report.plots import plt, save_figure


def plot_accuracy_matrix(r: np.ndarray, path: str | Path, title: str = "") -> Path:
    """R as a heat map with its values written in, rows the experience just trained."""
    n = len(r)
    fig, ax = plt.subplots(figsize=(1.0 + 0.7 * n, 0.8 + 0.7 * n))
    im = ax.imshow(r, vmin=0, vmax=1, cmap="viridis")
    for i in range(n):
        for j in range(r.shape[1]):
            if np.isfinite(r[i, j]):
                ax.text(
                    j,
                    i,
                    f"{r[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if r[i, j] < 0.6 else "black",
                )
    ax.set_xlabel("tested on experience j")
    ax.set_ylabel("after training on experience i")
    ax.set_xticks(range(r.shape[1]))
    ax.set_yticks(range(n))
    fig.colorbar(im, ax=ax, fraction=0.046, label="accuracy")
    ax.set_title(title, fontsize=9)
    return save_figure(fig, path)
