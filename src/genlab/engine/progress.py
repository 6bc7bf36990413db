"""A live progress bar on stderr: step, steps/s, and the latest accuracy of each split."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class RunProgress:
    """Context manager; ``advance`` each step, ``show`` the metrics of each evaluation."""

    def __init__(self, title: str, total: int, start: int = 0, enabled: bool = True) -> None:
        self.enabled = enabled
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=24),
            MofNCompleteColumn(),
            TextColumn("{task.fields[metrics]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            disable=not enabled,
            refresh_per_second=8,
        )
        self._task = self._progress.add_task(title, total=total, completed=start, metrics="")

    def __enter__(self) -> RunProgress:
        self._progress.__enter__()
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
