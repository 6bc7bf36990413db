"""Seeds by a pre-registered group-sequential rule whose intervals stay valid under optional
stopping.

A claim starts at ``min_seeds``, looks at its intervals, and adds ``group`` seeds at a time until
the decision is made or ``max_seeds`` is reached. Peeking inflates errors unless each look spends
only part of the error budget: look ``k`` (at ``n_k`` seeds) uses a Student-t interval at level
``1 - alpha_k`` with ``alpha_k = alpha * (n_k - n_{k-1}) / n_K`` (alpha spent in proportion to the
seeds added; the ``alpha_k`` sum to ``alpha``). By the union bound the chance that any look's
interval misses the truth is at most ``alpha``, whatever the stopping — for normal per-seed values
exactly, for others as far as the t-interval holds (``benchmarks/sequential_seeds.py`` measures
both). It is Bonferroni over a handful of looks: conservative, a few lines over scipy, and valid at
the 2-10 seeds claims run, where the z-based group-sequential boundaries of A/B-testing libraries
(``spotify-confidence``) are not.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SeedRule:
    """``min_seeds``, then ``group`` more at a time up to ``max_seeds``; ``alpha`` is the error
    budget over all looks (two-sided, as the claims' 95% intervals)."""

    min_seeds: int
    max_seeds: int
    group: int = 2
    alpha: float = 0.05

    def __post_init__(self) -> None:
        if not 2 <= self.min_seeds <= self.max_seeds or self.group < 1 or not 0 < self.alpha < 1:
            raise ValueError(
                "a seed rule needs 2 <= min_seeds <= max_seeds, group >= 1 and "
                f"0 < alpha < 1, got {self}"
            )

    def looks(self) -> list[int]:
        """The seed counts at which the intervals are read."""
        n = list(range(self.min_seeds, self.max_seeds, self.group))
        return [*n, self.max_seeds]

    def confidence(self, seeds: int) -> float:
        """The interval level at the look with ``seeds`` seeds (a count not among the looks reads
        at the next look's level, so an interrupted group never spends more than planned)."""
        looks = self.looks()
        k = next((i for i, n in enumerate(looks) if n >= seeds), len(looks) - 1)
        spent = (looks[k] - (looks[k - 1] if k else 0)) / looks[-1]
        return 1.0 - self.alpha * spent


__all__ = ["SeedRule"]
