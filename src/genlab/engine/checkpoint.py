"""Checkpoints that survive damage: written atomically, the previous one kept, checked on reading.

``save`` writes the new state beside the old (``last.pt.tmp``), moves the old to ``last.prev.pt``
and renames the new into place, so a kill at any moment leaves at least one whole checkpoint.
``load`` checks a file's zip CRCs (which catch truncation and flipped bytes that ``torch.load``
alone would read without complaint) before reading it with ``weights_only=True`` (no pickled
code). A damaged last checkpoint is moved aside (``.damaged``) and the previous one used, with a
``CheckpointWarning`` naming the file; with none usable, a ``CheckpointError`` names the files and
the way out (``genlab run --restart``).
"""

from __future__ import annotations

import io
import os
import warnings
import zipfile
from pathlib import Path
from typing import Any

import torch

from genlab.errors import GenlabError

RESUME = "last.pt"
FINAL = "model.pt"


class CheckpointError(GenlabError):
    """No usable checkpoint for a run that has some: the user decides (``--restart``). Exit 2."""

    exit_code = 2


class CheckpointWarning(UserWarning):
    """A damaged checkpoint was set aside and an older one used."""


def previous(path: Path) -> Path:
    """Where the checkpoint before ``path`` is kept (``last.pt`` -> ``last.prev.pt``)."""
    return path.with_name(f"{path.stem}.prev{path.suffix}")


def save(path: Path, state: dict[str, Any], keep_previous: bool = True) -> None:
    """Write ``state`` to ``path``, keeping the checkpoint it replaces as ``previous(path)``."""
    buf = io.BytesIO()
    torch.save(state, buf)
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(buf.getbuffer())
        if keep_previous and path.exists():
            os.replace(path, previous(path))
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise GenlabError(f"cannot write checkpoint {path}: {exc.strerror or exc}") from None


def _read(path: Path) -> dict[str, Any]:
    with zipfile.ZipFile(path) as z:
        bad = z.testzip()
    if bad is not None:
        raise ValueError(f"record {bad} fails its CRC check")
    state = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(state, dict):
        raise ValueError(f"holds a {type(state).__name__}, not a checkpoint")
    return state


def load(path: Path) -> dict[str, Any] | None:
    """The state saved at ``path`` (or, if it is damaged or missing, the previous one); None if
    there is neither; ``CheckpointError`` if there are files but none is usable."""
    problems: list[str] = []
    for p in (path, previous(path)):
        if not p.is_file():
            continue
        try:
            state = _read(p)
        except Exception as exc:  # zip, pickle, torch and OS errors all mean: not usable
            problems.append(f"{p} is damaged ({type(exc).__name__}: {exc})")
            continue
        if problems:
            aside = path.with_name(path.name + ".damaged")
            try:  # so that the next save does not keep it as the previous checkpoint
                os.replace(path, aside)
            except OSError:
                aside = path
            warnings.warn(
                f"{problems[0]}; moved it to {aside.name} and resumed from {p.name} "
                f"(step {state.get('step', '?')})",
                CheckpointWarning,
                stacklevel=2,
            )
        return state
    if not problems:
        return None
    raise CheckpointError(
        "; ".join(problems) + f"; no usable checkpoint in {path.parent}. Run it again with "
        "--restart to train it from step 0 (its metrics are replaced)"
    )


def discard(path: Path) -> None:
    """Remove the checkpoint at ``path``, the previous one and any set aside as damaged."""
    for p in (path, previous(path), path.with_name(path.name + ".damaged")):
        p.unlink(missing_ok=True)
