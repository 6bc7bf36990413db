"""Weight-space tools over finished runs: interpolation, soups, ratatouille, lineage checks.

Post-training operations read models back from the store's checkpoints (DESIGN.md):

- ``genlab.weights.load``: a run's spec, its plain model and weights, its data, its lineage and the
  shared-initialisation check;
- ``genlab.weights.ops``: interpolation, weighted averages, uniform and greedy soups (pure torch);
- ``genlab.weights.path``: accuracy per split along the path between two runs (``genlab soup``);
- ``genlab.weights.ratatouille``: the three stages of model ratatouille as run specs.

A model built from a parent run (``model.name = "from_run"``) finds it in the store the run is
trained into (``genlab.store_context``).

Floor: above the engine and the store (it reads checkpoints); below ``derived``, sweeps and the
CLI.
"""
