"""Finished runs as models: spec, plain weights, data, lineage and the shared-initialisation check.

A run's final checkpoint (``runs/<id>/model.pt``, read with ``weights_only=True`` by
``genlab.engine.checkpoint``) holds the state of the model the engine trained, which a method may
have wrapped. The *plain* weights are those of the bare architecture: a wrapping method class that
keeps the bare model inside (SWA/EMA keep their average) says how to get them with a static
``plain_state(state) -> state``. Every weight-space tool works on plain weights of one architecture.

Lineage: a run whose model is ``from_run`` starts from its parent's weights. Two runs *share an
initialisation* when their lineages meet (one descends from the other, or both from a common run),
or when their roots start from the same architecture and seed. Averaging weights only makes sense
then (linear mode connectivity; Frankle et al. 2020, Wortsman et al. 2022, Rame et al. #102).
"""

from __future__ import annotations

import hashlib
import json

import torch
from torch import Tensor, nn

from genlab.data import TaskData, TaskInfo
from genlab.engine import checkpoint
from genlab.errors import SpecError
from genlab.methods import METHODS
from genlab.models import MODELS
from genlab.spec import Component, RunSpec, parse_spec
from genlab.store import Store
from genlab.tasks import TASKS

FROM_RUN, SOUP = "from_run", "soup"
DTYPES = {"float32": torch.float32, "float64": torch.float64}
State = dict[str, Tensor]


def finished_spec(store: Store, run_id: str) -> RunSpec:
    """The spec of a run that is ``done`` in ``store`` (``SpecError`` otherwise)."""
    status = store.status(run_id)
    if status is None:
        raise SpecError(f"no run {run_id!r} in store {store.root}")
    if status != "done":
        raise SpecError(
            f"run {run_id} is {status!r} in store {store.root}; weight-space tools read finished "
            "runs: train it first"
        )
    return parse_spec(store.run(run_id)["spec"])


def build_task_data(spec: RunSpec) -> TaskData:
    """The run's data realisation (task params and ``data_seed``), in the run's dtype."""
    entry = TASKS.get(spec.task.name)
    try:
        data = entry.obj(entry.params.model_validate(spec.task.params), spec.data_seed)
    except ValueError as exc:
        raise SpecError(f"task {spec.task.name!r}: {exc}") from None
    return data.to(DTYPES[spec.dtype])


def parent_of(spec: RunSpec) -> str | None:
    """The run whose weights initialise this one: a ``from_run`` model's parent, a ``soup``'s
    first ingredient (its architecture)."""
    if spec.model.name == FROM_RUN:
        return spec.model.params["run"]
    return spec.model.params["runs"][0] if spec.model.name == SOUP else None


def lineage(store: Store, run_id: str) -> list[tuple[str, RunSpec]]:
    """``[(run, spec), (parent, spec), ..., (root, spec)]`` following ``from_run`` parents."""
    out: list[tuple[str, RunSpec]] = []
    rid: str | None = run_id
    while rid is not None:
        if any(r == rid for r, _ in out):
            raise SpecError(f"run {run_id}: its lineage loops at {rid}")
        spec = finished_spec(store, rid)
        out.append((rid, spec))
        rid = parent_of(spec)
    return out


def root_model(store: Store, spec: RunSpec) -> Component:
    """The architecture a run trains: its model, or its oldest ancestor's if it is ``from_run``."""
    parent = parent_of(spec)
    return spec.model if parent is None else lineage(store, parent)[-1][1].model


def build_plain(store: Store, spec: RunSpec, info: TaskInfo) -> nn.Module:
    """A fresh instance of the run's bare architecture for ``info`` (global RNG left untouched)."""
    comp = root_model(store, spec)
    entry = MODELS.get(comp.name)
    with torch.random.fork_rng():
        try:
            model = entry.obj(entry.params.model_validate(comp.params), info)
        except ValueError as exc:
            raise SpecError(f"model {comp.name!r}: {exc}") from None
    return model.to(DTYPES[spec.dtype])


def plain_state(store: Store, run_id: str) -> State:
    """The run's final plain weights (see the module docstring)."""
    spec = finished_spec(store, run_id)
    saved = checkpoint.load(store.run_dir(run_id) / checkpoint.FINAL)
    if saved is None:
        raise SpecError(f"run {run_id} has no final checkpoint ({checkpoint.FINAL})")
    cls = METHODS.get(spec.method.name).obj
    state = saved["model"]
    return cls.plain_state(state) if hasattr(cls, "plain_state") else state


def load_into(model: nn.Module, state: State, what: str) -> nn.Module:
    """``model.load_state_dict(state)`` with an error that says what did not fit."""
    try:
        model.load_state_dict(state)
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()
        raise SpecError(
            f"{what} does not fit the architecture: {' '.join(first[:3])} (a method that wraps "
            "the model needs a plain_state; the task must give the same input shape)"
        ) from None
    return model


def load_model(store: Store, run_id: str, info: TaskInfo | None = None) -> nn.Module:
    """The run's final plain model, in eval mode; ``info`` defaults to the run's own task's."""
    spec = finished_spec(store, run_id)
    info = info or build_task_data(spec).info
    model = load_into(build_plain(store, spec, info), plain_state(store, run_id), f"run {run_id}")
    return model.eval()


def head_of(model: nn.Module) -> tuple[str, nn.Module]:
    """The name and module of the model's output layer (``classifier``, an MLP's last layer,
    a recurrent model's ``readout``, a transformer's ``unembed``, a bare ``Sequential``'s last)."""
    for name in ("classifier", "readout", "unembed", "head"):
        mod = getattr(model, name, None)
        if isinstance(mod, nn.Linear):
            return name, mod
    net = getattr(model, "net", None)
    if isinstance(net, nn.Sequential) and isinstance(net[-1], nn.Linear):
        return f"net.{len(net) - 1}", net[-1]
    if isinstance(model, nn.Sequential) and isinstance(model[-1], nn.Linear):  # linear_student
        return f"{len(model) - 1}", model[-1]
    raise SpecError(f"cannot find the output layer of {type(model).__name__}")


def _init_key(spec: RunSpec) -> str:
    text = json.dumps(
        {"model": spec.model.model_dump(mode="json"), "seed": spec.seed}, sort_keys=True
    )
    return "init:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def init_keys(store: Store, run_id: str) -> tuple[set[str], str]:
    """The starting points a run descends from (runs, and its root's architecture + seed), and
    a description of its lineage for messages."""
    chain = lineage(store, run_id)
    root = chain[-1][1]
    keys = {f"run:{r}" for r, _ in chain} | {_init_key(root)}
    where = " <- ".join(r for r, _ in chain)
    return keys, f"{where} (initialised by {root.model.name}, seed {root.seed})"


def check_shared_init(store: Store, run_ids: list[str]) -> str:
    """Raise ``SpecError`` unless all runs share an initialisation; return what they share."""
    if len(run_ids) < 2:
        raise SpecError("weight averaging needs at least two runs")
    found = [init_keys(store, r) for r in run_ids]
    common = set.intersection(*(k for k, _ in found))
    if not common:
        lines = "\n  ".join(desc for _, desc in found)
        raise SpecError(
            "these runs do not share an initialisation:\n  " + lines + "\naveraging the weights "
            "of independently initialised networks is not meaningful (no linear mode "
            "connectivity). Fine-tune them from one run (model.name=from_run, model.run=ID), or "
            "pass --allow-unrelated to interpolate anyway."
        )
    runs = sorted(k[4:] for k in common if k.startswith("run:"))
    return f"common ancestor {runs[-1]}" if runs else "same architecture and seed"


def check_same_shapes(states: list[State], names: list[str]) -> None:
    """Raise ``SpecError`` unless every state has the same keys and shapes as the first."""
    ref = states[0]
    for st, name in zip(states[1:], names[1:], strict=True):
        if st.keys() != ref.keys():
            diff = sorted(set(st) ^ set(ref))[:4]
            raise SpecError(f"run {name} has other parameters than {names[0]}: {diff}")
        for k, v in st.items():
            if v.shape != ref[k].shape:
                raise SpecError(
                    f"run {name}: {k} has shape {tuple(v.shape)}, {names[0]} has "
                    f"{tuple(ref[k].shape)}"
                )


def plain_module(model: nn.Module, spec: RunSpec, info: TaskInfo, store: Store) -> nn.Module:
    """The bare architecture of a live run's ``model`` (the method's wrapping removed through its
    ``plain_state``), or ``model`` itself when its method does not wrap it; global RNG untouched."""
    cls = METHODS.get(spec.method.name).obj
    if not hasattr(cls, "plain_state"):
        return model
    state = cls.plain_state({k: v.detach() for k, v in model.state_dict().items()})
    return load_into(build_plain(store, spec, info), state, f"run {spec.run_id}").eval()
