"""Training: the run loop, batches, optimisers, checkpoints, seeding.

Floor: above the registries and ``spec``; below ``weights``, ``derived`` and ``fed``. A kind of
run with its own trainer registers it here (``train.register_runner``; ``genlab.fed``).
"""

from genlab.engine.train import RunResult, evaluate, prepare, run_spec

__all__ = ["RunResult", "evaluate", "prepare", "run_spec"]
