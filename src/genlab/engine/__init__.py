"""Training: the run loop, batches, optimisers, checkpoints, seeding."""

from genlab.engine.train import RunResult, evaluate, prepare, run_spec

__all__ = ["RunResult", "evaluate", "prepare", "run_spec"]
