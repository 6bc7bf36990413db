"""Each client's data in a federated run: the task's training environments, pooled and split.

Built from the run spec alone (task, ``data_seed``, ``fed``), so that the server and every
``ClientApp`` (in this process or on a Flower deployment) derive the same partition. Each client
keeps a share ``fed.local_test`` of its examples for its per-client accuracy; clients past
``fed.clients`` (``fed.held_out`` of them) never train and measure generalization to unseen
clients.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import torch

from genlab.data import Split, TaskData
from genlab.errors import SpecError
from genlab.fed.splits import split_clients
from genlab.spec import RunSpec
from genlab.tasks import TASKS


@dataclass
class ClientData:
    """One client's local training and test data."""

    train: Split
    test: Split


@dataclass
class FedData:
    """The task's data and every client's partition (trainers first, then held-out clients)."""

    task: TaskData
    clients: list[ClientData]
    n_train_clients: int


def _pool(task: TaskData) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    xs, ys, envs = [], [], []
    for i, split in enumerate(task.train.values()):
        xs.append(split.x)
        ys.append(split.y)
        envs.append(torch.full((len(split),), i, dtype=torch.long))
    return torch.cat(xs), torch.cat(ys), torch.cat(envs)


def build_fed_data(spec: RunSpec) -> FedData:
    """Build the task from ``data_seed`` and split its training data among the clients."""
    fed = spec.fed
    if fed is None:
        raise SpecError("fed: a federated run needs a [fed] table")
    entry = TASKS.get(spec.task.name)
    try:
        task = entry.obj(entry.params.model_validate(spec.task.params), spec.data_seed)
    except ValueError as exc:
        raise SpecError(f"task {spec.task.name!r}: {exc}") from None
    if task.info.kind != "classification":
        raise SpecError(f"fed: task {spec.task.name!r} is {task.info.kind}; needs classification")
    task = task.to(getattr(torch, spec.dtype))
    x, y, env = _pool(task)
    n = fed.clients + fed.held_out
    try:
        parts = split_clients(fed.skew, y, env, n, fed.alpha, spec.data_seed)
    except ValueError as exc:
        raise SpecError(str(exc)) from None
    gen = torch.Generator().manual_seed(spec.data_seed + 1)
    clients = []
    for idx in parts:
        idx = idx[torch.randperm(len(idx), generator=gen)]
        n_test = max(1, round(fed.local_test * len(idx))) if fed.local_test and len(idx) > 1 else 0
        te, tr = idx[:n_test], idx[n_test:]
        clients.append(ClientData(Split(x[tr], y[tr]), Split(x[te], y[te])))
    return FedData(task, clients, fed.clients)


@lru_cache(maxsize=2)
def fed_data(spec_json: str) -> FedData:
    """``build_fed_data`` cached by canonical spec, for the ClientApps of one process."""
    return build_fed_data(RunSpec.model_validate_json(spec_json))
