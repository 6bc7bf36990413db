"""genlab: a laboratory for how machine-learning models generalize.

Specs go in, measured runs come out, and claims from the seed papers get honest verdicts.
See ``DESIGN.md`` for the vocabulary (Task, Model, Method, Probe, Claim).
"""

__version__ = "0.1.0"
