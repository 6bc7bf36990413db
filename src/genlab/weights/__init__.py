"""Weight-space tools over finished runs: interpolation, soups, ratatouille, lineage checks.

Post-training operations read models back from the store's checkpoints (DESIGN.md):

- ``genlab.weights.context``: the store a run is trained into, so that a model built from a parent
  run (``model.name = "from_run"``) finds it;
- ``genlab.weights.load``: a run's spec, its plain model and weights, its data, its lineage and the
  shared-initialisation check;
- ``genlab.weights.ops``: interpolation, weighted averages, uniform and greedy soups (pure torch);
- ``genlab.weights.path``: accuracy per split along the path between two runs (``genlab soup``);
- ``genlab.weights.ratatouille``: the three stages of model ratatouille as run specs.

This ``__init__`` imports nothing that imports the engine, so the engine may import
``genlab.weights.context``.
"""
