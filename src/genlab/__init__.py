"""genlab: a laboratory for how machine-learning models generalize.

Specs go in, measured runs come out, and claims from the seed papers get honest verdicts.
See ``DESIGN.md`` for the vocabulary (Task, Model, Method, Probe, Claim).

From Python (``genlab.api``): ``genlab.run(spec)``, ``genlab.sweep(...)``, ``genlab.results(...)``,
``genlab.Store(path).metrics()``, ``genlab.load_plugin("./my_method.py")``; imported on first use, so
``import genlab`` stays light.

Layers, each importing only those below it (imports inside functions included;
``tests/test_architecture.py`` checks it), bottom first:

1. data and base: ``errors``, ``data``, ``losses``, ``attacks``, ``grads``, ``datasets``,
   ``registry``, ``regime``, ``store``, ``store_context``, ``provenance``, ``papers`` (the
   catalogue: data), ``lora`` (adapters), pure ``analysis``;
2. registries: ``models`` -> ``methods`` -> ``ensembles`` -> ``probes`` -> ``tasks``;
3. ``plugins``, ``spec``, ``design``: specs validated against the registries;
4. ``engine`` (and the store);
5. what reads or trains finished runs: ``weights``, then ``derived`` (the models, tasks, methods and
   probes built from finished runs) and ``fed`` (a kind of run); they register into the
   registries, the spec and the engine, which import them by name only
   (``registry.EXTENSIONS``), never by an import statement;
6. ``sweep``, ``export``; ``report`` (tables, figures, site); ``zoo``; ``claims``;
7. ``api``, ``coverage``, ``cli``, and ``conformance`` (the test kit: tests and the CLI only).

An upper layer that must be called from below installs a callback or registers a kind.
"""

import os
import sys
import types
from typing import Any

# Idle OpenMP threads sleep instead of spinning, so concurrent runs share the cores fairly; this
# must be set before torch loads its OpenMP runtime (see genlab.engine.threads).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"

_LAZY = {
    "run": "genlab.api",
    "sweep": "genlab.api",
    "results": "genlab.api",
    "Store": "genlab.store",
    "load_plugin": "genlab.plugins",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module = importlib.import_module(_LAZY[name])
        return getattr(module, "load" if name == "load_plugin" else name)
    raise AttributeError(f"module 'genlab' has no attribute {name!r}")


class _Facade(types.ModuleType):
    """``genlab.sweep(...)`` is the Python API's sweep (``genlab.api.sweep``) although
    ``genlab.sweep`` is also a package: when that package is imported and set on ``genlab``, it
    is made callable here, so the sweep package knows nothing of the API above it."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "sweep" and isinstance(value, types.ModuleType):
            value.__class__ = _CallableSweep
        super().__setattr__(name, value)


class _CallableSweep(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return __getattr__("sweep")(*args, **kwargs)


sys.modules[__name__].__class__ = _Facade
