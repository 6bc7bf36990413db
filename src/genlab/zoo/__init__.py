"""Judging probes on a zoo of models, after the PGDL competition (Jiang et al., NeurIPS 2020).

``config`` builds the zoo (small models with varied hyperparameters, each a ``RunSpec``), ``score``
scores a measure by Kendall's tau with the generalization gap and by the conditional mutual
information score (minimum over pairs of hyperparameters), and ``run`` trains the zoo through
``genlab.engine.run_spec`` (so it resumes and lands in the store) and ranks every probe metric.

Floor: above the engine and ``report``; below ``claims`` and the CLI.
"""

from genlab.zoo.config import HYPERPARAMS, ZooConfig, zoo_specs
from genlab.zoo.run import ZooResult, run_zoo
from genlab.zoo.score import cmi_score, kendall_tau, rank_measures

__all__ = [
    "HYPERPARAMS",
    "ZooConfig",
    "ZooResult",
    "cmi_score",
    "kendall_tau",
    "rank_measures",
    "run_zoo",
    "zoo_specs",
]
