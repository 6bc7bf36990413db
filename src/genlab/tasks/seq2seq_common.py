"""The token layout of source -> target tasks, shared by encoder-decoder and decoder-only models.

One row is ``[source, left-padded to src_len | BOS, target, right-padded]`` and its targets are
``IGNORE`` over the source, then ``target, EOS``: position ``src_len + j`` holds the decoder input
``(BOS, t_1, ..., t_n)[j]`` and is scored on ``(t_1, ..., t_n, EOS)[j]``. An encoder-decoder reads
the first ``src_len`` columns as its source and the rest as its (teacher-forced) decoder input; a
decoder-only transformer reads the row as one causal sequence (source, then BOS as separator).
Because every scored position is one next-token prediction, a row is right under teacher forcing
exactly when greedy free-running decoding reproduces the target (see ``probes/exact_match.py``).

``info.extra`` carries ``src_len``, ``bos``, ``eos`` and ``pad`` for the models and the greedy
decoder; tokens share one vocabulary (``PAD`` 0, ``BOS`` 1, ``EOS`` 2, then the task's symbols).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from genlab.data import Split, TaskInfo
from genlab.losses import IGNORE

PAD, BOS, EOS, FIRST = 0, 1, 2, 3


def pack_pairs(
    sources: Sequence[Sequence[int]],
    targets: Sequence[Sequence[int]],
    src_len: int,
    tgt_len: int,
    meta: dict | None = None,
    source_targets: Sequence[Sequence[int]] | None = None,
) -> Split:
    """Rows in the layout above; ``tgt_len`` counts the target plus its ``EOS``. Optional
    ``source_targets`` (one per source, as long as it) score positions inside the source too
    (in-context episodes that train on their demonstrations)."""
    n = len(sources)
    x = torch.full((n, src_len + tgt_len), PAD, dtype=torch.long)
    y = torch.full((n, src_len + tgt_len), IGNORE, dtype=torch.long)
    for i, (s, t) in enumerate(zip(sources, targets, strict=True)):
        if len(s) > src_len or len(t) + 1 > tgt_len:
            raise ValueError(f"row {i}: source {len(s)} / target {len(t)} exceed the layout")
        if s:
            x[i, src_len - len(s) : src_len] = torch.tensor(s, dtype=torch.long)
            if source_targets is not None:
                y[i, src_len - len(s) : src_len] = torch.tensor(source_targets[i], dtype=torch.long)
        x[i, src_len] = BOS
        if t:
            tt = torch.tensor(t, dtype=torch.long)
            x[i, src_len + 1 : src_len + 1 + len(t)] = tt
            y[i, src_len : src_len + len(t)] = tt
        y[i, src_len + len(t)] = EOS
    return Split(x, y, dict(meta or {}))


def seq2seq_info(vocab_size: int, src_len: int, tgt_len: int, chance: float, **extra) -> TaskInfo:
    """``TaskInfo`` of a task in this layout (one shared vocabulary for inputs and outputs)."""
    return TaskInfo(
        kind="sequence",
        n_outputs=vocab_size,
        vocab_size=vocab_size,
        seq_len=src_len + tgt_len,
        chance=chance,
        extra={
            "layout": "seq2seq",
            "src_len": src_len,
            "max_length": src_len + tgt_len,
            "bos": BOS,
            "eos": EOS,
            "pad": PAD,
            **extra,
        },
    )
