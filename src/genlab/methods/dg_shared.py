"""What the domain-generalization methods share: features of a model, per-env losses, state
kept as model buffers (so checkpoints and resumes carry it), and DomainBed-style random ranges.

Imported by the ``dg_*`` method modules and, being public, by the floors above (``ensembles``,
``derived``); it registers nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.errors import SpecError
from genlab.losses import cross_entropy
from genlab.methods.base import Batch
from genlab.models.mlp import MLP

# name -> (kind, low, high): "log10" draws 10**U(low, high), "int_log10" rounds it,
# "uniform" draws U(low, high)
Ranges = Mapping[str, tuple[str, float, float]]


def sample_params(ranges: Ranges, seed: int) -> dict[str, float | int]:
    """One random draw of a method's hyperparameters from its ``RANGES`` (DomainBed's
    ``random_hparams``), reproducible from ``seed``."""
    rng = np.random.RandomState(seed)
    out: dict[str, float | int] = {}
    for name in sorted(ranges):
        kind, lo, hi = ranges[name]
        v = rng.uniform(lo, hi)
        if kind == "uniform":
            out[name] = float(v)
        elif kind == "log10":
            out[name] = float(10**v)
        elif kind == "int_log10":
            out[name] = int(round(10**v))
        else:
            raise ValueError(f"unknown range kind {kind!r} for {name}")
    return out


def train_envs(info: TaskInfo) -> list[str]:
    """Names of the task's training environments (``["main"]`` for single-domain tasks)."""
    return list(info.extra.get("train_envs", ["main"]))


def require_envs(info: TaskInfo, method: str, k: int = 2) -> list[str]:
    """Raise ``ValueError`` (a ``SpecError`` at build time) unless the task trains on >= k envs."""
    envs = train_envs(info)
    if len(envs) < k:
        raise ValueError(
            f"method {method!r} needs at least {k} training environments; the task trains on "
            f"{len(envs)} ({', '.join(envs)}). Use a multi-environment task (e.g. colored_digits, "
            "rotated_digits) and leave at least two environments out of task.test_envs."
        )
    return envs


def classifier(model: nn.Module) -> nn.Linear:
    """The model's last linear layer: ``model.classifier`` or the last layer of the core MLP."""
    head = getattr(model, "classifier", None)
    if isinstance(head, nn.Linear):
        return head
    if isinstance(model, MLP) and isinstance(model.net[-1], nn.Linear):
        return model.net[-1]
    raise SpecError(
        f"this method needs a model with features and a linear classifier (cnn, mlp); "
        f"got {type(model).__name__}"
    )


def featurize(model: nn.Module, x: Tensor) -> Tensor:
    """Penultimate features: ``model.featurize(x)``, or the core MLP without its last layer."""
    if hasattr(model, "featurize"):
        return model.featurize(x)
    if isinstance(model, MLP):
        return model.net[:-1](model.embed(x).flatten(1))
    classifier(model)  # raises the explanatory error
    raise AssertionError


def check_features(model: nn.Module) -> None:
    """Fail at build time (``SpecError``) when the model cannot give features."""
    classifier(model)


def pooled(batches: Mapping[str, Batch]) -> tuple[Tensor, Tensor, list[int]]:
    """All envs' inputs and targets concatenated, with each env's size."""
    xs, ys = zip(*batches.values(), strict=True)
    return torch.cat(xs), torch.cat(ys), [len(y) for y in ys]


def env_logits(model: nn.Module, batches: Mapping[str, Batch]) -> list[tuple[Tensor, Tensor]]:
    """One forward pass over the pooled batch (as DomainBed does), split back per env."""
    x, y, sizes = pooled(batches)
    return list(zip(model(x).split(sizes), y.split(sizes), strict=True))


def env_losses(model: nn.Module, batches: Mapping[str, Batch]) -> Tensor:
    """The mean cross-entropy of each environment, as a vector."""
    return torch.stack([cross_entropy(lo, y) for lo, y in env_logits(model, batches)])


def buffer(model: nn.Module, name: str, value: Tensor) -> Tensor:
    """A method's state as a buffer on the model (created once), so checkpoints carry it."""
    if not hasattr(model, name):
        model.register_buffer(name, value)
    return getattr(model, name)
