"""What a plugin's component promises the engine, checked when a run is built, before training.

- A plugin model's output on two examples is a tensor whose last dimension is ``info.n_outputs``.
- A plugin method's ``loss`` returns ``(Tensor, dict)`` (checked on a copy of the model and method,
  on a batch of the run's shape, so the run itself is unchanged).

Built-in components are held to the same contracts by their tests, and are not checked again here.

A violation is a ``SpecError`` (exit code 2, nothing written) naming the component's file and line.
Anything a component raises while being checked (a crash in a model's forward) is left to the
caller, which records the run ``failed``; ``where`` names the line of user code that raised.
"""

from __future__ import annotations

import copy
import inspect
import sys
import sysconfig
import traceback
from typing import Any

import torch
from torch import Tensor, nn

from genlab.data import TaskData
from genlab.engine.batches import BatchSampler
from genlab.errors import SpecError
from genlab.methods import Method

_LIBRARY_DIRS = tuple(
    p
    for p in {
        sysconfig.get_path("stdlib"),
        sysconfig.get_path("purelib"),
        sysconfig.get_path("platlib"),
        sys.prefix,
    }
    if p
)


def source_of(obj: Any) -> str:
    """``FILE:LINE`` of a class, function or method (``?`` when Python cannot tell)."""
    obj = inspect.unwrap(obj)
    try:
        file = inspect.getsourcefile(obj)
        line = inspect.getsourcelines(obj)[1]
    except (OSError, TypeError):
        return getattr(obj, "__module__", None) or "?"
    return f"{file}:{line}"


def one_line(exc: BaseException) -> str:
    """``Type: message`` on one line (a long message's first line)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def where(exc: BaseException) -> str:
    """``FILE:LINE`` of the innermost frame of ``exc`` outside Python's and installed libraries
    (the user's or genlab's code), else of the innermost frame; empty without a traceback."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    own = [f for f in frames if not f.filename.startswith(_LIBRARY_DIRS)]
    frame = (own or frames)[-1]
    return f"{frame.filename}:{frame.lineno}"


def _is_plugin(kind: str, name: str) -> bool:
    from genlab import plugins

    return (kind, name) in plugins._OWNERS


def _one_batch(data: TaskData, batch_size: int | None) -> dict[str, tuple[Tensor, Tensor]]:
    """A batch per training environment of the run's shape, drawn without touching its order."""
    return BatchSampler(data.train, batch_size, torch.Generator().manual_seed(0)).next()


def check_model(model: nn.Module, data: TaskData, name: str, builder: Any) -> None:
    """A plugin model's output on two examples ends in ``info.n_outputs`` logits (in eval mode,
    without gradients, random state restored: training is unchanged)."""
    if not _is_plugin("model", name):
        return
    split = next((s for s in data.splits().values() if len(s)), None)
    if split is None:
        return
    was_training = model.training
    model.eval()
    try:
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            out = model(split.x[:2])
    finally:
        model.train(was_training)
    n = data.info.n_outputs
    at = source_of(builder.forward if isinstance(builder, type) else builder)
    if not isinstance(out, Tensor):
        raise SpecError(
            f"model {name!r} returned {type(out).__name__}, not a tensor of {n} logits "
            f"per example ({at})"
        )
    if out.dim() == 0 or out.shape[-1] != n:
        raise SpecError(
            f"model {name!r} returns logits of shape {tuple(out.shape)}; the task has "
            f"info.n_outputs = {n}, so the last dimension must be {n} ({at})"
        )


def check_method(
    method: Method, model: nn.Module, data: TaskData, name: str, batch_size: int | None
) -> None:
    """A plugin method's ``loss`` returns ``(Tensor, dict)``: called once on copies of the method
    and the model, random state restored."""
    if not _is_plugin("method", name):
        return
    batches = _one_batch(data, batch_size)
    with torch.random.fork_rng(devices=[]):
        got = copy.deepcopy(method).loss(copy.deepcopy(model), batches)
    at = source_of(type(method).loss)
    ok = isinstance(got, tuple) and len(got) == 2
    if not (ok and isinstance(got[0], Tensor) and got[0].dim() == 0 and isinstance(got[1], dict)):
        what = (
            f"({', '.join(type(g).__name__ for g in got)})"
            if isinstance(got, tuple)
            else type(got).__name__
        )
        if isinstance(got, Tensor):
            what = f"a bare Tensor of shape {tuple(got.shape)}"
        raise SpecError(
            f"method {name!r}: loss must return (scalar Tensor, dict of logs), got {what} ({at})"
        )
