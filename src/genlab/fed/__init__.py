"""Federated learning under heterogeneity, on Flower (issue 15; FedImpro #1, FedLoG #78).

``splits`` (client splits) needs no Flower, nor does the ``fed`` table of a run spec
(``genlab.spec.FedSpec``); the rest (``client``, ``strategies``, ``grid``, ``runner``) import
``flwr``, the ``genlab[fl]`` extra.

Floor: above the engine and the store, beside the components derived from finished runs. Federated
runs are a kind of run: importing this package (the registries do, ``genlab.registry.EXTENSIONS``)
registers their trainer with the engine (``register_runner("fed", ...)``) and the validation of
graph runs with the spec (``register_resolver``); neither imports this package.
"""

from __future__ import annotations

from typing import Any

from genlab.engine.train import RunResult, register_runner
from genlab.fed.graph_spec import is_graph, resolve
from genlab.spec import RunSpec, register_resolver


def train_federated(spec: RunSpec, *args: Any) -> RunResult:
    """``engine.run_spec``'s trainer for specs with a ``fed`` table (``fed.runner``)."""
    from genlab.fed.runner import run_federated

    return run_federated(spec, *args)


def resolve_graph_run(spec: RunSpec) -> bool:
    """A federated graph run validates its own components (``graph_spec.resolve``)."""
    if not is_graph(spec.task.name):
        return False
    resolve(spec)
    return True


register_runner("fed", train_federated)
register_resolver(resolve_graph_run)
