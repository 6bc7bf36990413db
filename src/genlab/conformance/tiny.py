"""Tiny configurations of the registered components, and the partners each is trained with.

A component's tiny configuration (its params) is, in this order:

1. declared at its registration: ``register(..., tiny={...})`` gives params that override its
   defaults; ``tiny=fn``, with ``fn(root: Path) -> dict``, first writes a small fixture under
   ``root`` (for tasks that read files, e.g. MNIST's IDX files) and returns the params;
2. otherwise its defaults, when none of its params is required.

A component that reads finished runs from the store (a model fine-tuned from a run, a task
re-weighted by one, a method distilling teachers) declares ``tiny=fn`` whose ``fn`` trains its
tiny parent with ``genlab.derived.runs.tiny_parent`` into the active store (``genlab.store_context``): the conformance
tests make one session store active while they build and check every component.

Either way it must be tiny: a task holds at most ``MAX_EXAMPLES`` examples over all its splits and
a model at most ``MAX_PARAMETERS`` parameters on the task it is paired with (``checks.check_tiny``).

Partners. A task, model or method is trained in one ``RunSpec`` with tiny partners of the other
kinds: the first (task, model) pair that builds, trying tasks and models by name, with the first
method that builds on it (``erm`` first, then by name). A pair builds when the model accepts the
task's ``TaskInfo`` (a model refuses an input it cannot read with a ``SpecError`` or a
``ValueError`` at build time, as ``engine.prepare`` expects). A probe takes the first such spec on
which it measures something without raising ``SpecError``; a probe that measures only under one
training rule declares it with ``register(..., tiny_optimizer={...})``, the optimizer of its specs
(e.g. plain GD for a probe of GD theory).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from genlab.data import TaskData
from genlab.errors import SpecError
from genlab.registry import Registry
from genlab.spec import RunSpec, parse_spec

MAX_EXAMPLES = 2000
MAX_PARAMETERS = 50_000
KINDS = ("task", "model", "method", "probe")
WHERE = {
    "task": "task.params",
    "model": "model.params",
    "method": "method.params",
    "probe": "eval.probes.0.params",
}
REFERENCE_METHOD = "erm"
BATCH = 32


def tiny_run(task: str, model: str, steps: int = 2) -> str:
    """Train ``steps`` updates of the tiny ``task`` and ``model`` (their declared ``tiny`` params)
    into the active store and return the run id (``genlab.derived.runs.tiny_parent``)."""
    from genlab.derived.runs import tiny_parent

    return tiny_parent(task, model, steps)


class NotTiny(Exception):
    """A component that cannot be built tiny; the message says why and what to declare."""


def registry(kind: str) -> Registry:
    """The registry of ``kind`` (task, model, method or probe)."""
    from genlab.methods import METHODS
    from genlab.models import MODELS
    from genlab.probes import PROBES
    from genlab.tasks import TASKS

    return {"task": TASKS, "model": MODELS, "method": METHODS, "probe": PROBES}[kind]


def components() -> list[tuple[str, str]]:
    """Every registered ``(kind, name)``, in registry order."""
    return [(kind, name) for kind in KINDS for name in registry(kind).names()]


class Tiny:
    """Tiny params and partner specs for every registered component; fixtures go under ``root``.

    Everything is built once and cached, so one ``Tiny`` serves a whole test session.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._params: dict[tuple[str, str], dict] = {}
        self._data: dict[str, TaskData | Exception] = {}
        self._pairs: list[tuple[str, str, str]] | None = None
        self.refusals: dict[str, list[str]] = {}  # model or method -> why it did not build

    def params(self, kind: str, name: str) -> dict[str, Any]:
        """The tiny params of one component (see the module docstring); ``NotTiny`` if none."""
        key = (kind, name)
        if key not in self._params:
            entry = registry(kind).get(name)
            tiny = entry.extra.get("tiny")
            if callable(tiny):
                out = dict(tiny(self.root / f"{kind}-{name}"))
            elif tiny is not None:
                out = dict(tiny)
            else:
                required = [k for k, f in entry.params.model_fields.items() if f.is_required()]
                if required:
                    raise NotTiny(
                        f"{kind} {name!r} has required params ({', '.join(required)}) and declares "
                        f"no tiny configuration: add tiny={{...}} (or tiny=fn(root) -> params) "
                        "to its registration"
                    )
                out = {}
            self._params[key] = out
        return dict(self._params[key])

    def data(self, task: str) -> TaskData:
        """The tiny task built with ``data_seed=0`` (cached; its build error is raised again)."""
        if task not in self._data:
            entry = registry("task").get(task)
            try:
                self._data[task] = entry.obj(
                    entry.params.model_validate(self.params("task", task)), 0
                )
            except Exception as exc:  # kept to be raised for every component that needs it
                self._data[task] = exc
        got = self._data[task]
        if isinstance(got, Exception):
            raise got
        return got

    def _builds(self, task: str, model: str, method: str | None = None) -> bool:
        """Whether ``model`` (and ``method``, wrapping it) build on the tiny ``task``'s info."""
        info = self.data(task).info
        m_entry = registry("model").get(model)
        try:
            net = m_entry.obj(m_entry.params.model_validate(self.params("model", model)), info)
        except (SpecError, ValueError) as exc:
            self.refusals.setdefault(model, []).append(f"on {task}: {exc}")
            return False
        if method is not None:
            e = registry("method").get(method)
            try:
                e.obj(e.params.model_validate(self.params("method", method)), info).wrap(net)
            except (SpecError, ValueError) as exc:
                self.refusals.setdefault(method, []).append(f"on {task} with {model}: {exc}")
                return False
        return True

    def _methods(self) -> list[str]:
        names = registry("method").names()
        return sorted(names, key=lambda n: (n != REFERENCE_METHOD, n))

    def pairs(self) -> list[tuple[str, str, str]]:
        """Every ``(task, model, method)`` that builds: tasks and models by name, each pair with
        its first method that builds (``erm`` first). Tasks or models that cannot be built tiny
        are left out here (their own checks report them)."""
        if self._pairs is None:
            self._pairs = []
            for task in registry("task").names():
                try:
                    self.data(task)
                except Exception:
                    continue
                for model in registry("model").names():
                    try:
                        if not self._builds(task, model):
                            continue
                        method = next(m for m in self._methods() if self._builds(task, model, m))
                    except (NotTiny, StopIteration):
                        continue
                    self._pairs.append((task, model, method))
        return self._pairs

    def _spec(self, task: str, model: str, method: str, probes: list[str] | None = None) -> RunSpec:
        """A two-step spec of these components, ``BATCH`` examples per environment, weight decay 0
        (a step moves parameters only through the gradient); ``probes=None``: the default ones."""
        d: dict[str, Any] = {
            kind: {"name": name, "params": self.params(kind, name)}
            for kind, name in (("task", task), ("model", model), ("method", method))
        }
        d.update(steps=2, batch_size=BATCH)
        for probe in probes or ():
            if optimizer := registry("probe").get(probe).extra.get("tiny_optimizer"):
                d["optimizer"] = optimizer
        if probes is not None:
            d["eval"] = {"probes": [{"name": n, "params": self.params("probe", n)} for n in probes]}
        return parse_spec(d)

    def candidates(self, kind: str, name: str) -> Iterator[RunSpec]:
        """Specs that train ``name`` with tiny partners, in the order they are tried."""
        registry(kind).params(name, self.params(kind, name), WHERE[kind])  # says what is wrong
        if kind == "task":
            self.data(name)  # a task that does not build says why
        for task, model, method in self.pairs():
            if kind == "task" and task == name or kind == "model" and model == name:
                yield self._spec(task, model, method)
            elif kind == "method" and self._builds(task, model, name):
                yield self._spec(task, model, name)
            elif kind == "probe":
                yield self._spec(task, model, method, probes=[name])

    def combinations(self, task: str) -> Iterator[RunSpec]:
        """Every (model, method) that builds on the tiny ``task``, as specs without probes."""
        for t, model, _ in self.pairs():
            if t == task:
                for method in self._methods():
                    if self._builds(task, model, method):
                        yield self._spec(task, model, method, probes=[])

    def per_task(self, probe: str) -> Iterator[RunSpec]:
        """``probe`` on every task that builds tiny, each with its first model and method."""
        seen: set[str] = set()
        for task, model, method in self.pairs():
            if task not in seen:
                seen.add(task)
                yield self._spec(task, model, method, probes=[probe])

    def spec(self, kind: str, name: str) -> RunSpec:
        """The tiny spec a component is checked on: its first candidate (for a probe, the first
        on which it measures something). ``NotTiny`` when there is none."""
        from genlab.engine.train import evaluate, prepare

        for spec in self.candidates(kind, name):
            if kind != "probe":
                return spec
            try:
                if evaluate(prepare(spec), 0):
                    return spec
            except SpecError:
                continue
        why = "; ".join(self.refusals.get(name, [])[-3:]) or "no refusal recorded"
        raise NotTiny(
            f"{kind} {name!r}: no tiny partner builds with it ({len(self.pairs())} task/model "
            f"pairs tried; last refusals: {why}); check its tiny configuration, or that it "
            "refuses unsuitable inputs only with a SpecError"
        )
