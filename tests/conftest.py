"""Shared fixtures: a throwaway store and a tiny, fast grokking spec."""

from __future__ import annotations

import pytest
import torch

from genlab.spec import RunSpec, load_run_spec
from genlab.store import Store

# Tiny runs on 2 cores: full batch on p=11 trains in milliseconds per step.
TINY = [
    "task.p=11", "steps=60", "batch_size=100000", 'model.name="mlp"', "model.params={}",
    "eval.every=20", "eval.log_points=4", "checkpoint_every=20", "stop=[]",
]  # fmt: skip


@pytest.fixture(autouse=True, scope="session")
def _threads() -> None:
    torch.set_num_threads(1)


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "store")


@pytest.fixture
def tiny_spec() -> RunSpec:
    return load_run_spec("grokking", TINY)
