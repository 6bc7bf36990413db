"""Figure kinds of the claims: each draws from the same per-run table the verdict used (arm labels,
``run_id``, measures) and, for curves, the store's long-format metrics of those runs.

    Curves(splits=("train/main", "test/heldout"), by="arm")   a metric against step, log axis
    ArmBars("ood", by="method")                               mean and 95% interval per arm
    LengthCurves(panel="task", line="arch")                   accuracy against test length
    Scatter("sharpness", "gap", by="width")                   one point per run, a fitted line
    PhaseGrid(value="rep_quality")                            Liu et al.'s phase diagram (#107)

``by``/``panel``/``line`` name label columns of the table; ``None`` joins every arm label.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from genlab.analysis.intervals import interval
from genlab.analysis.phases import PHASES
from genlab.report.plots import save_figure, split_length


def arm_labels(runs: pd.DataFrame, by: str | Sequence[str] | None, keys: Sequence[str]):
    """A string per run naming its arm: the ``by`` column(s), else the arm ``keys`` that vary."""
    if isinstance(by, str):
        return runs[by].astype(str)
    cols = list(by) if by else [k for k in keys if runs[k].nunique(dropna=False) > 1]
    if not cols:
        return pd.Series(["all"] * len(runs), index=runs.index)
    return runs[cols].astype(str).agg(" ".join, axis=1)


class FigureKind:
    """Base: ``draw(runs, metrics, path, title, keys)`` returns the written path or None;
    ``keys`` are the label columns that tell arms apart."""

    def draw(
        self,
        runs: pd.DataFrame,
        metrics: pd.DataFrame,
        path: Path,
        title: str,
        keys: Sequence[str] = (),
    ):
        raise NotImplementedError


@dataclass(frozen=True)
class Curves(FigureKind):
    """``metric`` on each of ``splits`` against step (log axis), one colour per arm, one line
    style per split; ``hline`` marks a level (e.g. 0.99)."""

    splits: tuple[str, ...]
    metric: str = "accuracy"
    by: str | tuple[str, ...] | None = None
    hline: float | None = None
    logx: bool = True

    def draw(
        self,
        runs: pd.DataFrame,
        metrics: pd.DataFrame,
        path: Path,
        title: str,
        keys: Sequence[str] = (),
    ):
        arm = dict(zip(runs["run_id"], arm_labels(runs, self.by, keys), strict=True))
        m = metrics[(metrics["metric"] == self.metric) & metrics["split"].isin(self.splits)]
        if self.logx:
            m = m[m["step"] > 0]
        if m.empty:
            return None
        colors = {a: f"C{i % 10}" for i, a in enumerate(dict.fromkeys(arm.values()))}
        styles = dict(zip(self.splits, ["--", "-", ":", "-."], strict=False))
        fig, ax = plt.subplots(figsize=(6.4, 4))
        for run_id, d in m.groupby("run_id", sort=False):
            for split, g in d.groupby("split"):
                g = g.sort_values("step")
                ax.plot(
                    g["step"],
                    g["value"],
                    styles.get(split, "-"),
                    lw=1,
                    color=colors.get(arm.get(run_id, ""), "grey"),
                    alpha=0.8,
                )
        if self.hline is not None:
            ax.axhline(self.hline, color="grey", lw=0.8)
        handles = [plt.Line2D([], [], color=c) for c in colors.values()]
        handles += [plt.Line2D([], [], color="k", ls=s) for s in styles.values()]
        ax.legend(handles, [*colors, *styles], fontsize=7, frameon=False, ncol=2)
        ax.set(
            xscale="log" if self.logx else "linear",
            xlabel="optimisation step",
            ylabel=self.metric,
            title=title,
        )
        return save_figure(fig, path)


@dataclass(frozen=True)
class ArmBars(FigureKind):
    """Mean and 95% interval (over seeds) of ``measure`` per arm; ``lines`` mark thresholds. A
    measure whose values all lie in [0, 1] (an accuracy, a rate) gets the percentile bootstrap,
    which stays in [0, 1]; any other the Student-t interval (``genlab.analysis.intervals``). The
    judge never reads the figure: its own intervals are unchanged."""

    measure: str
    by: str | tuple[str, ...] | None = None
    lines: tuple[tuple[str, float], ...] = ()

    def draw(
        self,
        runs: pd.DataFrame,
        metrics: pd.DataFrame,
        path: Path,
        title: str,
        keys: Sequence[str] = (),
    ):
        arm = arm_labels(runs, self.by, keys)
        values = pd.to_numeric(runs[self.measure], errors="coerce")
        finite = values[np.isfinite(values)]
        how = "bootstrap" if len(finite) and finite.between(0, 1).all() else "t"
        stats = {a: interval(values[arm == a].tolist(), how) for a in dict.fromkeys(arm)}
        means = np.array([s["mean"] for s in stats.values()], dtype=float)
        if np.isnan(means).all():
            return None
        lo = np.nan_to_num(means - np.array([s["ci_lo"] for s in stats.values()], dtype=float))
        hi = np.nan_to_num(np.array([s["ci_hi"] for s in stats.values()], dtype=float) - means)
        fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(stats) + 2), 3.6))
        ax.bar(
            range(len(stats)),
            means,
            yerr=[lo, hi],
            capsize=4,
            color=[f"C{i % 10}" for i in range(len(stats))],
        )
        ax.set_xticks(range(len(stats)), list(stats), rotation=20, fontsize=8, ha="right")
        for name, y in self.lines:
            ax.axhline(y, color="grey", lw=0.8, ls="--")
            ax.text(len(stats) - 0.5, y, name, fontsize=7, va="bottom", ha="right", color="grey")
        kind = "95% bootstrap interval" if how == "bootstrap" else "95% t interval"
        ax.set(ylabel=f"{self.measure} (mean, {kind} over seeds)", title=title)
        return save_figure(fig, path)


@dataclass(frozen=True)
class LengthCurves(FigureKind):
    """Per-sequence ``metric`` against test length at the last evaluation (mean over seeds):
    one panel per ``panel`` value, one line per ``line`` value; a dashed line after the longest
    training length ``train_length`` (when given; ``"auto"``: just below the shortest test
    length, where the default test range starts)."""

    panel: str | None = None
    line: str | tuple[str, ...] | None = None
    metric: str = "accuracy"
    train_length: int | Literal["auto"] | None = None

    def draw(
        self,
        runs: pd.DataFrame,
        metrics: pd.DataFrame,
        path: Path,
        title: str,
        keys: Sequence[str] = (),
    ):
        lengths = metrics["split"].map(split_length)
        m = metrics[lengths.notna() & (metrics["metric"] == self.metric)].copy()
        if m.empty:
            return None
        m["length"] = lengths[m.index]
        m = m[m["step"] == m.groupby("run_id")["step"].transform("max")]
        panel = (
            runs[self.panel].astype(str)
            if self.panel
            else pd.Series([""] * len(runs), index=runs.index)
        )
        line = arm_labels(runs, self.line, [k for k in keys if k != self.panel])
        m["panel"] = m["run_id"].map(dict(zip(runs["run_id"], panel, strict=True)))
        m["line"] = m["run_id"].map(dict(zip(runs["run_id"], line, strict=True)))
        panels = list(dict.fromkeys(m["panel"].dropna()))
        color = {x: f"C{i % 10}" for i, x in enumerate(dict.fromkeys(m["line"].dropna()))}
        fig, axes = plt.subplots(
            1, len(panels), figsize=(max(5.0, 3.2 * len(panels)), 3.4), squeeze=False
        )
        for ax, p in zip(axes[0], panels, strict=True):
            for x, g in m[m["panel"] == p].groupby("line", sort=False):
                g = g.groupby("length")["value"].mean()
                ax.plot(g.index, g.values, "o-", ms=3, color=color[x])
            if self.train_length is not None:
                edge = m["length"].min() - 1 if self.train_length == "auto" else self.train_length
                ax.axvline(edge + 0.5, color="grey", lw=0.8, ls="--")
            ax.set(title=str(p), xlabel="test length", ylim=(-0.02, 1.02))
        axes[0][0].set_ylabel(f"{self.metric} (mean over seeds)")
        handles = [plt.Line2D([], [], color=c, marker="o", ms=3) for c in color.values()]
        axes[0][-1].legend(handles, list(color), fontsize=7, frameon=False)
        fig.suptitle(title, fontsize=9)
        return save_figure(fig, path)


@dataclass(frozen=True)
class Scatter(FigureKind):
    """``y`` against ``x``, one point per run coloured by arm, with a least-squares line."""

    x: str
    y: str
    by: str | tuple[str, ...] | None = None
    fit: bool = True

    def draw(
        self,
        runs: pd.DataFrame,
        metrics: pd.DataFrame,
        path: Path,
        title: str,
        keys: Sequence[str] = (),
    ):
        d = runs.dropna(subset=[self.x, self.y])
        if d.empty:
            return None
        arm = arm_labels(d, self.by, keys)
        fig, ax = plt.subplots(figsize=(5.4, 4))
        for i, a in enumerate(dict.fromkeys(arm)):
            g = d[arm == a]
            ax.scatter(g[self.x], g[self.y], s=14, color=f"C{i % 10}", label=str(a))
        if self.fit and len(d) > 2 and d[self.x].nunique() > 1:
            k, b = np.polyfit(d[self.x].astype(float), d[self.y].astype(float), 1)
            xs = np.linspace(d[self.x].min(), d[self.x].max(), 50)
            ax.plot(xs, k * xs + b, color="k", lw=0.8)
        ax.set(xlabel=self.x, ylabel=self.y, title=title)
        if arm.nunique() > 1:
            ax.legend(fontsize=7, frameon=False)
        return save_figure(fig, path)


@dataclass(frozen=True)
class PhaseGrid(FigureKind):
    """Liu et al.'s phase diagram (#107): the ``phase`` column of each cell of a two-axis grid
    (the first two arm keys: x, then y; the lowest seed), coloured, with ``value`` written in it."""

    value: str | None = None
    phase: str = "phase"
    colors: tuple[str, ...] = ("#2c7fb8", "#41ab5d", "#fdae61", "#d7191c")  # in PHASES order

    def draw(
        self,
        runs: pd.DataFrame,
        metrics: pd.DataFrame,
        path: Path,
        title: str,
        keys: Sequence[str] = (),
    ):
        from matplotlib.colors import ListedColormap

        x, y = keys[0], keys[1]
        cell = runs[runs["seed"] == runs["seed"].min()]
        xs, ys = sorted(cell[x].unique()), sorted(cell[y].unique())
        grid = np.full((len(ys), len(xs)), np.nan)
        fig, ax = plt.subplots(figsize=(1.1 * len(xs) + 3, 0.8 * len(ys) + 2))
        for _, r in cell.iterrows():
            i, j = ys.index(r[y]), xs.index(r[x])
            grid[i, j] = PHASES.index(r[self.phase])
            if self.value and not np.isnan(r[self.value]):
                ax.text(j, i, f"{r[self.value]:.2f}", ha="center", va="center", fontsize=8)
        ax.imshow(
            grid,
            cmap=ListedColormap(self.colors),
            vmin=-0.5,
            vmax=3.5,
            origin="lower",
            aspect="auto",
        )
        ax.set_xticks(range(len(xs)), [f"{v:g}" for v in xs])
        ax.set_yticks(range(len(ys)), [f"{v:g}" for v in ys])
        ax.set(
            xlabel=x, ylabel=y, title=title + (f"\n(numbers: {self.value})" if self.value else "")
        )
        handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in self.colors]
        ax.legend(
            handles, PHASES, fontsize=7, frameon=False, bbox_to_anchor=(1.02, 1), loc="upper left"
        )
        return save_figure(fig, path)


__all__ = ["ArmBars", "Curves", "FigureKind", "LengthCurves", "PhaseGrid", "Scatter", "arm_labels"]
