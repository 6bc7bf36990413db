"""Template tasks on abstract symbols, tested on symbols never seen in training (#96).

Boix-Adsera et al. ("When can transformers reason with abstract symbols?", catalogue #96): a
template is a string of wildcards such as ``aa`` or ``ab``; an example replaces each distinct
wildcard by a distinct random symbol, and the label is the template's index. The default
``["aa", "ab"]`` is the same/different task. Training draws symbols from the first
``n_symbols_train`` tokens; ``test/unseen_symbols`` draws them from ``n_symbols_test`` further
tokens that never occur in training (their embeddings stay at initialisation), so only a model
that compares symbols, rather than memorising them, scores above chance there. ``val/main`` is
fresh examples over the training symbols.

The label is read at the last position (``TaskInfo.kind = "classification"``); all templates have
the same length so that the last position is a symbol.
"""

from __future__ import annotations

import numpy as np
import torch
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.tasks import TASKS


class SeqTemplatesParams(Params):
    """Params of ``seq_templates``."""

    templates: list[str] = Field(
        default_factory=lambda: ["aa", "ab"],
        description="wildcard strings of equal length (letters a-z); the label is the index",
    )
    n_symbols_train: int = Field(100, ge=1, le=100_000, description="symbols seen in training")
    n_symbols_test: int = Field(100, ge=1, le=100_000, description="unseen test symbols")
    n_train: int = Field(1000, ge=1, description="training examples")
    n_val: int = Field(200, ge=0, description="examples over training symbols")
    n_test: int = Field(500, ge=1, description="examples over unseen symbols")

    @model_validator(mode="after")
    def _check(self) -> SeqTemplatesParams:
        if len(self.templates) < 2:
            raise ValueError("templates: need at least 2 templates to classify")
        if len(set(self.templates)) != len(self.templates):
            raise ValueError(f"templates: duplicates in {self.templates}")
        if len({len(t) for t in self.templates}) != 1:
            raise ValueError(f"templates: all must have the same length, got {self.templates}")
        for t in self.templates:
            if not t or not all("a" <= c <= "z" for c in t):
                raise ValueError(f"templates: {t!r} must be letters a-z")
        need = max(len(set(t)) for t in self.templates)
        for name in ("n_symbols_train", "n_symbols_test"):
            if getattr(self, name) < need:
                raise ValueError(
                    f"{name} ({getattr(self, name)}) is below the {need} distinct symbols a "
                    "template needs"
                )
        return self


def _draw(
    p: SeqTemplatesParams, rng: np.random.Generator, n: int, offset: int, n_sym: int
) -> Split:
    """``n`` examples, symbols from ``offset .. offset + n_sym - 1``."""
    labels = rng.integers(0, len(p.templates), size=n)
    rows = []
    for lab in labels:
        t = p.templates[lab]
        letters = sorted(set(t))
        sym = rng.choice(n_sym, size=len(letters), replace=False) + offset
        rows.append([int(sym[letters.index(c)]) for c in t])
    x = torch.tensor(rows, dtype=torch.long)
    return Split(x, torch.as_tensor(labels, dtype=torch.long), {})


@TASKS.register("seq_templates", SeqTemplatesParams, papers=(96,), family="length")
def seq_templates(params: SeqTemplatesParams, data_seed: int) -> TaskData:
    """Template (same/different) classification on unseen symbols (Boix-Adsera et al., #96)."""
    rng = np.random.default_rng(data_seed)
    k = params.n_symbols_train
    train = {"main": _draw(params, rng, params.n_train, 0, k)}
    val = {"main": _draw(params, rng, params.n_val, 0, k)} if params.n_val else {}
    test = {"unseen_symbols": _draw(params, rng, params.n_test, k, params.n_symbols_test)}
    info = TaskInfo(
        kind="classification",
        n_outputs=len(params.templates),
        vocab_size=k + params.n_symbols_test,
        seq_len=len(params.templates[0]),
        chance=1.0 / len(params.templates),
        extra={"n_symbols_train": k},
    )
    return TaskData(train=train, val=val, test=test, info=info)
