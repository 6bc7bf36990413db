"""A live progress line on stderr: what runs, a bar, the step count, elapsed time and ETA, and the
latest accuracy of each split.

The line fits the terminal: the step count and the ETA always show; the live metrics are cut
first (whole ``split value`` items, then `` …``), then the bar shrinks, then the description is
cut. Within a sweep the
description is ``run k/N · method=mixup seed=1``: the sweep installs its runs' labels with
``labelled`` (an upper layer calling down through a context variable, never an import), and the
line reads the label of its run id. A run that continues from a checkpoint says so above the line:
``resumed from step 250``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Any

from rich.console import Console
from rich.progress import Progress, ProgressBar, Task
from rich.table import Table
from rich.text import Text

BAR_MIN, BAR_MAX = 8, 24  # the bar's width: at least (while the description fits), at most
METRICS_MIN = 10  # live metrics narrower than this are left out altogether
_LABELS: ContextVar[Mapping[str, str] | None] = ContextVar("genlab_run_labels", default=None)


def run_label(labels: Mapping[str, Any]) -> str:
    """``method=mixup seed=1`` from a run's labels (``method.name`` -> ``method``; ``data_seed``
    only where it differs from ``seed``)."""
    parts = []
    for k, v in labels.items():
        if k == "data_seed" and v == labels.get("seed"):
            continue
        parts.append(f"{k.removesuffix('.name')}={v}")
    return " ".join(parts)


@contextlib.contextmanager
def labelled(runs: Mapping[str, Mapping[str, Any]]) -> Iterator[None]:
    """While inside, the progress line of run id ``r`` (a key of ``runs``, in order) reads
    ``run k/N · <its labels>``."""
    n = len(runs)
    text = {
        rid: f"run {k}/{n} · {run_label(lab)}".rstrip(" ·")
        for k, (rid, lab) in enumerate(runs.items(), 1)
    }
    token = _LABELS.set(text)
    try:
        yield
    finally:
        _LABELS.reset(token)


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "-:--:--"
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def fit(metrics: str, width: int) -> str:
    """As many whole ``split value`` items of ``metrics`` (separated by two spaces) as fit in
    ``width`` columns, with `` …`` when some are left out; empty when none fits."""
    if len(metrics) <= width:
        return metrics
    shown = ""
    for item in metrics.split("  "):
        more = f"{shown}  {item}" if shown else item
        if len(more) + 2 > width:
            break
        shown = more
    return f"{shown} …" if shown else ""


def widths(width: int, description: str, fixed: int, metrics: str) -> tuple[int, int, int]:
    """The widths of the description, the bar and the metrics on a line of ``width`` columns whose
    other cells (the step count, the times and the gaps between cells) take ``fixed``: the
    description first (leaving the bar ``BAR_MIN``), then the bar's ``BAR_MIN``, then the metrics
    (none when fewer than ``METRICS_MIN`` columns are left), then the bar grows to ``BAR_MAX``."""
    room = max(0, width - fixed)
    desc = min(len(description), max(0, room - BAR_MIN))
    bar = min(BAR_MIN, room - desc)
    left = room - desc - bar
    shown = len(fit(metrics, left)) if left >= METRICS_MIN else 0
    bar += min(BAR_MAX - bar, left - shown)
    return desc, bar, shown


class _Line(Progress):
    """A ``Progress`` whose every task is one line laid out by ``widths``."""

    def make_tasks_table(self, tasks: list[Task]) -> Table:
        table = Table.grid(padding=(0, 1))
        for task in tasks:
            table.add_row(*line(task, self.console.width))
        return table


def line(task: Task, width: int) -> list[Any]:
    """The cells of ``task``'s line for a console ``width`` columns wide."""
    total = int(task.total or 0)
    count = f"{int(task.completed):>{len(str(total))}}/{total}"
    times = f"{_clock(task.elapsed)} eta {_clock(task.time_remaining)}"
    if width - len(count) - len(times) - 5 < BAR_MIN:  # a narrow terminal: the ETA alone
        times = f"eta {_clock(task.time_remaining)}"
    metrics = str(task.fields.get("metrics", ""))
    fixed = len(count) + len(times) + 4  # four gaps of one column between five cells
    desc_w, bar_w, metrics_w = widths(width - 1, task.description, fixed, metrics)
    desc = Text(task.description, style="bold", no_wrap=True, overflow="ellipsis")
    desc.truncate(desc_w, overflow="ellipsis")
    bar = ProgressBar(total=task.total, completed=task.completed, width=bar_w) if bar_w else ""
    cells = [desc, bar, Text(count, no_wrap=True), Text(times, no_wrap=True)]
    shown = fit(metrics, metrics_w)
    return [*cells, Text(shown, no_wrap=True)] if shown else cells


class RunProgress:
    """Context manager; ``advance`` each step, ``show`` the metrics of each evaluation. ``run_id``
    finds the run's ``run k/N`` label when a sweep installed one (``labelled``); ``console`` is
    stderr unless given (tests pass one of a fixed width)."""

    def __init__(
        self,
        title: str,
        total: int,
        start: int = 0,
        enabled: bool = True,
        run_id: str | None = None,
        console: Console | None = None,
        unit: str = "step",
    ) -> None:
        self.enabled = enabled
        self.start, self.unit = start, unit
        self.title = (_LABELS.get() or {}).get(run_id or "", title)
        self._progress = _Line(
            console=console or Console(stderr=True), disable=not enabled, refresh_per_second=8
        )
        self._task = self._progress.add_task(self.title, total=total, completed=start, metrics="")

    def __enter__(self) -> RunProgress:
        self._progress.__enter__()
        if self.enabled and self.start > 0:
            self._progress.console.print(
                f"{self.title}: resumed from {self.unit} {self.start}",
                highlight=False,
                markup=False,
            )
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.__exit__(*exc)

    def advance(self, step: int) -> None:
        if self.enabled:
            self._progress.update(self._task, completed=step)

    def show(self, metrics: dict[tuple[str, str], float]) -> None:
        if not self.enabled:
            return
        parts = [
            f"{split} {value:.3f}"
            for (split, metric), value in sorted(metrics.items())
            if metric == "accuracy"
        ]
        self._progress.update(self._task, metrics="acc " + "  ".join(parts))

    def render(self) -> str:
        """The line as it would show now, as plain text (for tests)."""
        console = self._progress.console
        with console.capture() as cap:
            console.print(self._progress.make_tasks_table(self._progress.tasks))
        return cap.get()


__all__ = ["RunProgress", "fit", "labelled", "line", "run_label", "widths"]
