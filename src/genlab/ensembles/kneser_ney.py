"""An interpolated Kneser-Ney n-gram language model over integer tokens.

Kneser & Ney (1995) as described by Chen & Goodman ("An empirical study of smoothing techniques
for language modeling", 1999): the highest order uses raw counts, every lower order the
*continuation* counts (the number of distinct tokens seen before an n-gram); each order subtracts
an absolute discount ``D_n = n1 / (n1 + 2 n2)`` (``n_k``: n-grams of that order with count ``k``)
and gives the mass it frees to the next lower order; the unigram level is interpolated with the
uniform distribution over the vocabulary, so every token has non-zero probability:

    P(w | h) = max(c(h w) - D, 0) / c(h .) + D * N1+(h .) / c(h .) * P(w | h[1:])

For Herel & Mikolov's ensembles (catalogue #69), n-gram models are the classic member beside
neural language models.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import torch
from torch import Tensor


class KneserNey:
    """``KneserNey(order, vocab_size).fit(stream)``; ``prob(context, w)``; ``stream_probs``."""

    def __init__(self, order: int, vocab_size: int) -> None:
        if order < 1 or vocab_size < 1:
            raise ValueError("order and vocab_size must be >= 1")
        self.order, self.vocab_size = order, vocab_size
        self.counts: list[Counter] = []
        self.total: list[Counter] = []
        self.types: list[Counter] = []
        self.discount: list[float] = []

    def fit(self, stream: Sequence[int]) -> KneserNey:
        toks = [int(t) for t in stream]
        raw = Counter(tuple(toks[i : i + self.order]) for i in range(len(toks) - self.order + 1))
        by_order: dict[int, Counter] = {self.order: raw}
        for n in range(self.order - 1, 0, -1):
            higher = (
                by_order[n + 1]
                if n + 1 < self.order
                else Counter(tuple(toks[i : i + n + 1]) for i in range(len(toks) - n))
            )
            by_order[n] = Counter(g[1:] for g in higher)  # continuation counts: distinct left words
        self.counts = [by_order[n] for n in range(1, self.order + 1)]
        self.total, self.types, self.discount = [], [], []
        for counts in self.counts:
            total, types = Counter(), Counter()
            for g, c in counts.items():
                total[g[:-1]] += c
                types[g[:-1]] += 1
            n1 = sum(1 for c in counts.values() if c == 1)
            n2 = sum(1 for c in counts.values() if c == 2)
            self.total.append(total)
            self.types.append(types)
            self.discount.append(n1 / (n1 + 2 * n2) if n1 + 2 * n2 else 0.5)
        return self

    def prob(self, context: Sequence[int], w: int) -> float:
        """``P(w | context)`` with the last ``order - 1`` tokens of ``context``."""
        h = tuple(int(t) for t in context)[-(self.order - 1) :] if self.order > 1 else ()
        p = 1.0 / self.vocab_size
        for n in range(len(h) + 1):  # from the unigram level up to the full context
            ctx = h[len(h) - n :] if n else ()
            level = n  # ctx has n tokens: the (n + 1)-gram level
            tot = self.total[level].get(ctx, 0)
            if tot == 0:
                continue
            d = self.discount[level]
            c = self.counts[level].get((*ctx, int(w)), 0)
            p = max(c - d, 0.0) / tot + d * self.types[level][ctx] / tot * p
        return p

    def stream_probs(self, stream: Sequence[int], start: int = 1) -> Tensor:
        """``P(stream[i] | stream[:i])`` for ``i >= start``, as a float64 tensor."""
        toks = [int(t) for t in stream]
        return torch.tensor(
            [
                self.prob(toks[max(0, i - self.order + 1) : i], toks[i])
                for i in range(start, len(toks))
            ],
            dtype=torch.float64,
        )

    def distribution(self, context: Sequence[int]) -> Tensor:
        """``P(. | context)`` over the vocabulary (sums to one)."""
        return torch.tensor(
            [self.prob(context, w) for w in range(self.vocab_size)], dtype=torch.float64
        )
