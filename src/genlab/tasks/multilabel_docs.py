"""Token documents with a (topic, aspect) label pair; held-out pairs; augmentation by splicing.

After Chai et al., "Compositional Generalization for Multi-label Text Classification" (AAAI 2024,
catalogue #71): label combinations unseen in training are where classifiers fail, and augmenting
the training set with texts for novel combinations helps. A document is a topic segment then an
aspect segment of ``seg_len`` tokens each; a segment's tokens come from its label's own vocabulary
with probability ``generic`` and otherwise from a vocabulary specific to the document's (topic,
aspect) pair, so that on the trained pairs the pair-specific words are the easy evidence and on an
unseen pair they are words never seen. Pairs train or test by ``coverage`` (``tasks/combos.py``).

``augment`` > 0 adds that many spliced documents per held-out pair, the stand-in for the paper's
generation models: the topic segment of a training document with the topic, the aspect segment of
one with the aspect. ``augment_pairs="trained"`` splices as many documents for the trained pairs
instead (a control: as much spliced text, no new composition). Targets follow the sequence
convention, one per position: ``IGNORE`` except the last two positions, which hold the topic and
the aspect (per-row accuracy: the exact label set; ``bow_classifier`` puts its two heads there, a
causal sequence model reads them off its last positions).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from pydantic import Field

from genlab.data import Split, TaskData, TaskInfo
from genlab.losses import IGNORE
from genlab.tasks import TASKS
from genlab.tasks.combos import ComboParams, combination_split


class DocsParams(ComboParams):
    """Params of ``multilabel_docs``."""

    n_topics: int = Field(6, ge=2, le=32)
    n_aspects: int = Field(6, ge=2, le=32)
    seg_len: int = Field(8, ge=1, le=64)
    vocab_per_label: int = Field(10, ge=1)
    vocab_per_pair: int = Field(4, ge=1)
    generic: float = Field(0.3, gt=0, le=1, description="share of a segment's label words")
    augment: int = Field(0, ge=0, description="spliced documents per held-out pair")
    augment_pairs: Literal["heldout", "trained"] = Field(
        "heldout", description="the pairs spliced documents are made for"
    )


class Vocab:
    """Token ids: padding 0, then topic, aspect and pair-specific words."""

    def __init__(self, p: DocsParams) -> None:
        self.p = p
        self.topic0 = 1
        self.aspect0 = self.topic0 + p.n_topics * p.vocab_per_label
        self.pair0 = self.aspect0 + p.n_aspects * p.vocab_per_label
        self.size = self.pair0 + p.n_topics * p.n_aspects * p.vocab_per_pair

    def segment(self, label0: int, label: int, pair: int, n: int, rng) -> np.ndarray:  # noqa: ANN001
        p = self.p
        generic = (
            label0 + label * p.vocab_per_label + rng.integers(0, p.vocab_per_label, (n, p.seg_len))
        )
        specific = (
            self.pair0
            + pair[:, None] * p.vocab_per_pair
            + rng.integers(0, p.vocab_per_pair, (n, p.seg_len))
        )
        return np.where(rng.random((n, p.seg_len)) < p.generic, generic, specific)

    def docs(self, pairs: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(topic segments, aspect segments) of documents with label ``pairs``."""
        t, a = pairs[:, 0], pairs[:, 1]
        pid = t * self.p.n_aspects + a
        return self.segment(self.topic0, t[:, None], pid, len(pairs), rng), self.segment(
            self.aspect0, a[:, None], pid, len(pairs), rng
        )


@TASKS.register("multilabel_docs", DocsParams, papers=(71,), family="compositional")
def multilabel_docs(params: DocsParams, data_seed: int) -> TaskData:
    """Documents labelled (topic, aspect); unseen pairs; splicing augmentation (Chai et al., #71)."""
    rng = np.random.default_rng(data_seed)
    trained, held = combination_split((params.n_topics, params.n_aspects), params.coverage, rng)
    vocab = Vocab(params)

    def labelled(x: np.ndarray, pairs: np.ndarray, meta: dict) -> Split:
        y = torch.full(x.shape, IGNORE, dtype=torch.long)
        y[:, -2:] = torch.tensor(pairs)
        return Split(torch.tensor(x), y, meta)

    def split(pairs: np.ndarray, k: int, meta: dict) -> Split:
        rows = np.repeat(pairs, k, axis=0)
        return labelled(np.concatenate(vocab.docs(rows, rng), 1), rows, meta)

    train = split(trained, params.per_combo, {})
    if params.augment:  # splice: a topic segment and an aspect segment from different documents
        pairs = held if params.augment_pairs == "heldout" else trained
        rows = np.repeat(pairs, round(params.augment * len(held) / len(pairs)), axis=0)
        top, asp = np.split(train.x.numpy(), 2, axis=1)
        labels = train.y[:, -2:].numpy()
        by_topic = [np.flatnonzero(labels[:, 0] == t) for t in range(params.n_topics)]
        by_aspect = [np.flatnonzero(labels[:, 1] == a) for a in range(params.n_aspects)]
        ti = np.array([rng.choice(by_topic[t]) for t in rows[:, 0]])
        ai = np.array([rng.choice(by_aspect[a]) for a in rows[:, 1]])
        spliced = labelled(np.concatenate([top[ti], asp[ai]], 1), rows, {})
        train = Split(torch.cat([train.x, spliced.x]), torch.cat([train.y, spliced.y]), {})
    val = {"main": split(trained, params.n_val, {})} if params.n_val else {}
    test = {"heldout": split(held, params.n_test, {"shift": "heldout"})}
    info = TaskInfo(
        kind="sequence",
        n_outputs=max(params.n_topics, params.n_aspects),
        vocab_size=vocab.size,
        seq_len=2 * params.seg_len,
        chance=1 / (params.n_topics * params.n_aspects),
        extra={"attributes": [params.n_topics, params.n_aspects]},
    )
    return TaskData({"main": train}, val, test, info)
