"""Federated graph runs as ``RunSpec``s: the run kind of ``fed.fedlog`` (Kim et al. 2024, #78).

A spec whose ``task`` is a graph task of ``GRAPH_TASKS`` (``sbm_graphs``) and that has a ``fed``
table is a federated graph run: every client holds one graph of ``genlab.fed.graphs``, the model
is a graph model of ``GRAPH_MODELS`` (``gcn``) and the method a graph strategy of
``GRAPH_METHODS`` (``fedavg``, ``fedlog``); ``genlab.fed.graph_runner`` trains it into the store.

These components live in registries of their own, not in ``genlab.tasks``/``models``/``methods``:
a ``genlab.data.Split`` holds ``x, y`` without an adjacency and every registered task must train
with every registered model (``tests/test_conformance.py``), which a graph and a GCN cannot. So
the generic conformance matrix never sees them (declared here, checked by
``tests/test_fed_graph_run.py``); the graph runs have their own checks there.

The ``fed`` table maps onto the graph setting: ``clients`` graphs, ``alpha`` their
Dirichlet label skew (``skew`` must be ``label``), ``local_test`` the share of each client's seen
nodes held out, ``local_steps`` full-batch local steps with ``optimizer`` (fresh every round);
``data_seed`` draws the graphs, ``seed`` the initialisation and FedLoG's synthetic nodes.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pydantic import Field

from genlab.errors import SpecError
from genlab.registry import Params, Registry

if TYPE_CHECKING:
    from genlab.spec import RunSpec


class SBMGraphsParams(Params):
    """Per-client stochastic-block-model graphs (``genlab.fed.graphs.sbm_clients``)."""

    classes: int = Field(5, ge=2)
    nodes: int = Field(200, ge=10, description="seen nodes per client")
    new_nodes: int = Field(
        100,
        ge=1,
        description="nodes that arrive after training, labels "
        "uniform: the unseen label distribution",
    )
    dim: int = Field(16, ge=1, description="node feature dimension")
    signal: float = Field(1.0, gt=0, description="scale of the class means (unit noise)")
    p_in: float = Field(0.05, ge=0, le=1, description="edge probability within a class")
    p_out: float = Field(0.005, ge=0, le=1, description="edge probability across classes")


class GCNParams(Params):
    """The 2-layer GCN of ``genlab.fed.graphs.GCN``."""

    hidden: int = Field(32, ge=1)


class FedLoGParams(Params):
    """The simplified FedLoG of ``genlab.fed.graph_apps.FedLoGStrategy``."""

    per_class: int = Field(20, ge=1, description="synthetic nodes per class")
    weight: float = Field(1.0, ge=0, description="weight of the synthetic nodes' loss")
    min_nodes: int = Field(5, ge=1, description="a client shares a class it holds this often")


class FedAvgParams(Params):
    """FedAvg (McMahan et al. 2017): the clients' models averaged, weighted by training nodes."""


# each entry's object is its params model (what validation needs; the builders are in graphs.py
# and graph_apps.py, which need Flower)
GRAPH_TASKS: Registry[type[Params]] = Registry("graph task")
GRAPH_MODELS: Registry[type[Params]] = Registry("graph model")
GRAPH_METHODS: Registry[type[Params]] = Registry("graph method")
for _reg, _name, _params in (
    (GRAPH_TASKS, "sbm_graphs", SBMGraphsParams),
    (GRAPH_MODELS, "gcn", GCNParams),
    (GRAPH_METHODS, "fedavg", FedAvgParams),
    (GRAPH_METHODS, "fedlog", FedLoGParams),
):
    _reg.register(_name, _params, papers=() if _name == "fedavg" else (78,))(_params)


def is_graph(task_name: str) -> bool:
    """Whether ``task_name`` names a federated graph task (so the spec is a graph run)."""
    return task_name in GRAPH_TASKS


def resolve(spec: RunSpec) -> None:
    """Validate a graph run's components and the fields the graph runner uses (SpecError naming
    the field otherwise); fills in the components' default params."""
    if spec.fed is None:
        raise SpecError(
            f"task {spec.task.name!r} is a federated graph task: it needs a fed table "
            "(e.g. fed.clients=5)"
        )
    for reg, comp, where in (
        (GRAPH_TASKS, spec.task, "task"),
        (GRAPH_MODELS, spec.model, "model"),
        (GRAPH_METHODS, spec.method, "method"),
    ):
        reg.get(comp.name)  # an unknown name lists the allowed ones
        comp.params = reg.params(comp.name, comp.params, f"{where}.params").model_dump(mode="json")
    fed, opt = spec.fed, spec.optimizer
    refused = {
        "fed.skew": (fed.skew != "label", "label (Dirichlet(alpha) class shares per graph)"),
        "fed.held_out": (fed.held_out != 0, "0"),
        "batch_size": (spec.batch_size is not None, "null (full batch)"),
        "eval.probes": (bool(spec.eval.probes), "[] (graph runs measure their own metrics)"),
        "stop": (bool(spec.stop), "[] (every round runs)"),
        "optimizer.warmup_steps": (opt.warmup_steps != 0, "0"),
        "optimizer.decay": (opt.decay != "constant", "constant"),
        "optimizer.grad_clip": (opt.grad_clip is not None, "null"),
        "dtype": (spec.dtype != "float32", "float32"),
    }
    bad = [f"{k}: a federated graph run needs {want}" for k, (no, want) in refused.items() if no]
    if bad:
        raise SpecError("; ".join(bad))


def graph_json(spec: RunSpec) -> str:
    """The keyword arguments of ``sbm_clients`` for ``spec``, as canonical JSON."""
    fed = spec.fed
    assert fed is not None
    kw = {
        **spec.task.params,
        "clients": fed.clients,
        "alpha": fed.alpha,
        "test_share": fed.local_test,
        "seed": spec.data_seed,
    }
    return json.dumps(kw, sort_keys=True)
