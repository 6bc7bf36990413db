"""Shared fixtures: a throwaway store and a tiny, fast grokking spec."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

from genlab.spec import RunSpec, load_run_spec
from genlab.store import Store

# Tiny runs on 2 cores: full batch on p=11 trains in milliseconds per step.
TINY = [
    "task.p=11",
    "steps=60",
    "batch_size=100000",
    'model.name="mlp"',
    "model.params={}",
    "eval.every=20",
    "eval.log_points=4",
    "checkpoint_every=20",
    "stop=[]",
]


@pytest.fixture(autouse=True, scope="session")
def _threads() -> None:
    torch.set_num_threads(1)


@pytest.fixture
def unload_plugins():
    """The plugins a test loads are forgotten after it (the registries are process-wide)."""
    from genlab import plugins

    before = set(plugins._LOADED)
    yield
    for key in set(plugins._LOADED) - before:
        plugins._unload(key)


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "store")


@pytest.fixture
def tiny_spec() -> RunSpec:
    return load_run_spec("grokking", TINY)


def benchmark(name: str) -> ModuleType:
    """A script of ``benchmarks/`` imported as a module (its helpers serve the tests too)."""
    if name not in sys.modules:
        path = Path(__file__).parents[1] / "benchmarks" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(name, path)
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]
