"""Environments into DomainBed's splits: training envs (in/out) and held-out test envs.

DomainBed (Gulrajani & Lopez-Paz, 2021) splits every environment into an ``in`` part (80%) and an
``out`` part (20%). Training environments train on ``in`` and validate on ``out`` (training-domain
validation); the environments named by ``test_envs`` are held out whole as ``test/<env>``. The split
is drawn from ``data_seed`` alone, never from the method or its hyperparameters.

With ``test_holdout`` the held-out environments are split too, as DomainBed splits every environment:
``test/<env>`` is the ``in`` part (80%, the accuracy every selection rule reports) and
``test/<env>:out`` the ``out`` part (20%, what DomainBed's test-domain oracle selects on). Every
environment then draws its permutation in order, held out or not, so an environment's in/out split
does not depend on which environments are held out (DomainBed seeds it by ``(trial_seed, env)``).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from genlab.data import Split, TaskData, TaskInfo

OUT_SUFFIX = ":out"  # ``test/<env>:out``: the held-out environment's 20% that the oracle selects on


def out_split(env: str) -> str:
    """The name of a held-out environment's ``out`` part (``test_holdout``)."""
    return env + OUT_SUFFIX


def is_out_split(name: str) -> bool:
    """Whether a split name (``test/<env>:out`` or ``<env>:out``) is a held-out env's ``out`` part."""
    return name.endswith(OUT_SUFFIX)


def check_test_envs(test_envs: Sequence[int], n_envs: int, names: Sequence[str] = ()) -> list[int]:
    """Validate env indices: in ``0..n_envs-1``, unique, at least one env left to train on."""
    shown = f" ({', '.join(f'{i}={n}' for i, n in enumerate(names))})" if names else ""
    for i in test_envs:
        if not 0 <= i < n_envs:
            raise ValueError(f"test env index {i} out of range; allowed 0..{n_envs - 1}{shown}")
    if len(set(test_envs)) != len(test_envs):
        raise ValueError(f"test env indices repeat: {list(test_envs)}")
    if len(test_envs) >= n_envs:
        raise ValueError(f"test_envs {list(test_envs)} leave no training environment{shown}")
    return sorted(test_envs)


def shuffled_parts(n: int, parts: int, gen: torch.Generator) -> list[Tensor]:
    """A seeded permutation of ``range(n)`` dealt into ``parts`` disjoint index sets (DomainBed's
    ``shuffle; images[i::parts]``)."""
    order = torch.randperm(n, generator=gen)
    return [order[i::parts] for i in range(parts)]


def domain_task(
    envs: dict[str, tuple[Tensor, Tensor]],
    test_envs: Sequence[int],
    info: TaskInfo,
    gen: torch.Generator,
    holdout_fraction: float = 0.2,
    meta: dict | None = None,
    test_holdout: bool = False,
) -> TaskData:
    """``TaskData`` from named environments in order: train/val from the training envs'
    ``in``/``out`` parts, test from the held-out envs (whole, or with ``test_holdout`` their
    ``in`` part as ``<env>`` and their ``out`` part as ``<env>:out``). ``info.extra`` gains
    ``envs``, ``train_envs`` and ``test_envs`` (names), which methods read (e.g. to require two
    envs)."""
    names = list(envs)
    test_idx = set(check_test_envs(test_envs, len(names), names))
    train, val, test = {}, {}, {}
    for i, name in enumerate(names):
        x, y = envs[name]
        m = {"env": name, "index": i, **(meta or {})}
        if i in test_idx and not test_holdout:
            test[name] = Split(x, y, m)
            continue
        order = torch.randperm(len(x), generator=gen)
        n_out = int(round(holdout_fraction * len(x)))
        out, inn = order[:n_out], order[n_out:]
        if i in test_idx:
            test[name] = Split(x[inn], y[inn], {**m, "part": "in"})
            test[out_split(name)] = Split(x[out], y[out], {**m, "part": "out"})
            continue
        train[name] = Split(x[inn], y[inn], m)
        val[name] = Split(x[out], y[out], m)
    extra = {
        **info.extra,
        "envs": names,
        "train_envs": [n for i, n in enumerate(names) if i not in test_idx],
        "test_envs": [n for i, n in enumerate(names) if i in test_idx],
    }
    info = TaskInfo(
        info.kind,
        info.n_outputs,
        info.input_shape,
        info.vocab_size,
        info.seq_len,
        info.chance,
        extra,
    )
    return TaskData(train=train, val=val, test=test, info=info)
