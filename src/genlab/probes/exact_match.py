"""Exact match by greedy, free-running decoding: the metric SCAN's papers report.

For a task in the source -> target layout (``tasks/seq2seq_common.py``), the decoder starts from
``BOS`` and feeds back its own argmax until every row has produced ``EOS`` (or the row is full);
a row counts when its output equals the target up to and including ``EOS`` (Lake & Baroni 2018;
#54, #57, #63). Works with any model that maps a row prefix to logits causally (encoder-decoders
and decoder-only transformers). Since every scored position is a next-token prediction, this
equals teacher-forced per-row ``accuracy`` up to ties in the argmax; the probe decodes for real so
that nothing rests on that argument, and ``tests/test_comp_scan.py`` checks the two agree.
"""

from __future__ import annotations

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.errors import SpecError
from genlab.losses import IGNORE
from genlab.probes import PROBES
from genlab.probes.base import EVAL_CHUNK, EvalContext, ProbeResult
from genlab.registry import Params


class ExactMatchParams(Params):
    """Params of ``exact_match``."""

    roles: list[str] = Field(
        default_factory=lambda: ["val", "test"], description="split roles to decode"
    )
    max_rows: int | None = Field(None, ge=1, description="decode the first rows only (speed)")


@torch.inference_mode()
def decode(
    model: nn.Module,
    x: Tensor,
    info: TaskInfo,
    temperature: float = 0.0,
    generator: torch.Generator | None = None,
) -> Tensor:
    """Free-running outputs ``(N, width - src_len)`` for rows ``x`` (only their source is read):
    greedy at ``temperature`` 0, else sampled from ``softmax(logits / temperature)``. Uses the
    model's ``start``/``step`` cache when it has one, else re-runs the growing prefix."""
    s, bos, eos, pad = (int(info.extra[k]) for k in ("src_len", "bos", "eos", "pad"))
    n, width = x.shape
    out = torch.full((n, width - s), pad, dtype=torch.long)
    done = torch.zeros(n, dtype=torch.bool)
    token = torch.full((n,), bos, dtype=torch.long)
    incremental = hasattr(model, "start") and hasattr(model, "step")
    if incremental:
        cache = model.start(x[:, :s])
    else:
        row = torch.full_like(x, pad)
        row[:, :s] = x[:, :s]
        row[:, s] = bos
    for j in range(width - s):
        if incremental:
            logits = model.step(cache, token)
        else:
            logits = model(row[:, : s + j + 1])[:, s + j]
        if temperature > 0:
            probs = torch.softmax(logits.double() / temperature, -1)
            token = torch.multinomial(probs, 1, generator=generator)[:, 0]
        else:
            token = logits.argmax(-1)
        out[:, j] = torch.where(done, pad, token)
        done |= token == eos
        if done.all():
            break
        if not incremental and s + j + 1 < width:
            row[:, s + j + 1] = token
    return out


def greedy_decode(model: nn.Module, x: Tensor, info: TaskInfo) -> Tensor:
    """Greedy free-running outputs (``decode`` at temperature 0)."""
    return decode(model, x, info)


def exact(pred: Tensor, y: Tensor) -> Tensor:
    """Per row: the decoded tokens equal every scored target (the target ends with EOS)."""
    return ((pred == y) | (y == IGNORE)).all(1)


@PROBES.register("exact_match", ExactMatchParams, papers=(54, 57, 63), family="compositional")
def exact_match(model: nn.Module, ctx: EvalContext, params: ExactMatchParams) -> ProbeResult:
    """Share of rows whose greedy free-running output is exactly the target, per split."""
    info = ctx.data.info
    if info.extra.get("layout") != "seq2seq":
        raise SpecError("exact_match needs a source -> target task (info.extra layout 'seq2seq')")
    s = int(info.extra["src_len"])
    was_training = model.training
    model.eval()
    out: ProbeResult = {}
    for name, split in ctx.splits.items():
        if name.split("/")[0] not in params.roles:
            continue
        x, y = split.x[: params.max_rows], split.y[: params.max_rows]
        hits = [
            exact(greedy_decode(model, x[i : i + EVAL_CHUNK], info), y[i : i + EVAL_CHUNK, s:])
            for i in range(0, len(x), EVAL_CHUNK)
        ]
        out[(name, "exact_match")] = torch.cat(hits).float().mean().item()
    model.train(was_training)
    return out
