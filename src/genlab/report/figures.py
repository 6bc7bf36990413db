"""Report figures: learning curves with seed bands, and per-environment bars with CIs (PNG bytes)."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from textwrap import fill

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd


def _png(fig: plt.Figure, layout: bool = True) -> bytes:
    buf = io.BytesIO()
    if layout:
        fig.tight_layout()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def group_name(row: pd.Series | dict, by: Sequence[str]) -> str:
    """``method.name=erm, optimizer.lr=0.001`` (or ``all runs`` without group columns); a column
    named ``group`` already holds such a name."""
    return ", ".join(str(row[c]) if c == "group" else f"{c}={row[c]}" for c in by) or "all runs"


def curve_figure(
    panels: dict[str, pd.DataFrame], by: Sequence[str], metric: str, note: str = ""
) -> bytes:
    """One panel per split: the mean over seeds per group against step (log axis) with its
    interval (``ci_lo``/``ci_hi``) as a band. Each frame is ``genlab.analysis.aggregate.curves``
    output; ``note`` is printed under the panels (e.g. which splits are not drawn, and why)."""
    n = max(1, len(panels))
    fig, axes = plt.subplots(1, n, figsize=(4.6 * n, 3.6), squeeze=False)
    for ax, (split, df) in zip(axes[0], panels.items(), strict=False):
        df = df[df["step"] > 0]
        groups = df.groupby(list(by), sort=True) if by else [((), df)]
        for i, (key, g) in enumerate(groups):
            key = key if isinstance(key, tuple) else (key,)
            label = group_name(dict(zip(by, key, strict=True)), by)
            g = g.sort_values("step")
            ax.plot(g["step"], g["mean"], color=f"C{i}", lw=1.6, label=label)
            lo, hi = g["ci_lo"].to_numpy(float), g["ci_hi"].to_numpy(float)
            ok = ~(np.isnan(lo) | np.isnan(hi))
            if ok.any():
                ax.fill_between(g["step"][ok], lo[ok], hi[ok], color=f"C{i}", alpha=0.2, lw=0)
        ax.set(xscale="log", xlabel="step", ylabel=metric, title=split)
        if metric == "accuracy":
            ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7, frameon=False)
    if note:  # under the panels: which splits are left out, and why
        text = fill(note, 70 * n)
        fig.text(0.01, 0.01, text, fontsize=7, color="0.3", va="bottom")
        fig.tight_layout(rect=(0, 0.02 + 0.045 * (text.count("\n") + 1), 1, 1))
        return _png(fig, layout=False)
    return _png(fig)


def env_bars(
    frame: pd.DataFrame, by: Sequence[str], metric: str, interval: str = "95% CI"
) -> bytes:
    """Bars of the mean per environment (x) and group (colour), with ``interval`` error bars (the
    frame's ``ci_lo``/``ci_hi``). ``frame`` is ``summarize`` output over ``[*by, "split"]``."""
    splits = sorted(frame["split"].unique())
    groups = frame.groupby(list(by), sort=True) if by else [((), frame)]
    groups = list(groups)
    width = 0.8 / max(1, len(groups))
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(splits) * max(1, len(groups)) ** 0.5), 3.6))
    for i, (key, g) in enumerate(groups):
        key = key if isinstance(key, tuple) else (key,)
        g = g.set_index("split").reindex(splits)
        x = np.arange(len(splits)) + (i - (len(groups) - 1) / 2) * width
        err = np.array(
            [
                [
                    m - lo if not math.isnan(lo) else 0
                    for m, lo in zip(g["mean"], g["ci_lo"], strict=True)
                ],
                [
                    hi - m if not math.isnan(hi) else 0
                    for m, hi in zip(g["mean"], g["ci_hi"], strict=True)
                ],
            ]
        )
        ax.bar(
            x,
            g["mean"],
            width,
            yerr=err,
            capsize=2,
            color=f"C{i}",
            label=group_name(dict(zip(by, key, strict=True)), by),
        )
    ax.set_xticks(np.arange(len(splits)), splits, rotation=20, fontsize=8)
    ax.set(ylabel=metric, title=f"final {metric} per environment ({interval} over seeds)")
    ax.legend(fontsize=7, frameon=False)
    return _png(fig)
