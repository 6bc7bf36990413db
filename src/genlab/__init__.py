"""genlab: a laboratory for how machine-learning models generalize.

Specs go in, measured runs come out, and claims from the seed papers get honest verdicts.
See ``DESIGN.md`` for the vocabulary (Task, Model, Method, Probe, Claim).

From Python (``genlab.api``): ``genlab.run(spec)``, ``genlab.sweep(...)``, ``genlab.results(...)``,
``genlab.Store(path).metrics()``, ``genlab.load_plugin("./my_method.py")``; imported on first use, so
``import genlab`` stays light.
"""

import os
from typing import Any

# Idle OpenMP threads sleep instead of spinning, so concurrent runs share the cores fairly; this
# must be set before torch loads its OpenMP runtime (see genlab.engine.threads).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"

_LAZY = {
    "run": "genlab.api", "sweep": "genlab.api", "results": "genlab.api",
    "Store": "genlab.store", "load_plugin": "genlab.plugins",
}  # fmt: skip


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module = importlib.import_module(_LAZY[name])
        return getattr(module, "load" if name == "load_plugin" else name)
    raise AttributeError(f"module 'genlab' has no attribute {name!r}")
