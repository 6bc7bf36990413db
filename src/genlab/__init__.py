"""genlab: a laboratory for how machine-learning models generalize.

Specs go in, measured runs come out, and claims from the seed papers get honest verdicts.
See ``DESIGN.md`` for the vocabulary (Task, Model, Method, Probe, Claim).
"""

import os

# Idle OpenMP threads sleep instead of spinning, so concurrent runs share the cores fairly; this
# must be set before torch loads its OpenMP runtime (see genlab.engine.threads).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
