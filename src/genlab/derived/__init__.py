"""Components derived from finished runs: models, tasks, methods and probes that read (or train)
other runs of the store they are trained into (``genlab.store_context``).

Models: ``from_run`` (fine-tune a run), ``soup`` (average runs' weights), ``frozen_features`` (a
zoo of frozen encoders), ``arrow_library`` and ``lora_hub`` (stored LoRA libraries,
``lora_library``). Task: ``useful`` (re-weighted by an early run). Method: ``unic`` (distil
teachers). Probes: ``wise`` (weight interpolation), ``lm_ensemble``, ``zoo_dg``, ``task_probes``.
Prerequisite runs are trained or found through ``runs`` (``train_run``, ``tiny_parent``), not the
conformance kit.

Floor: above the engine, the store and ``weights``; below sweeps, claims, reports and the CLI.
Each module registers into the registries of ``tasks``, ``models``, ``methods`` and ``probes``
under the names it always had; those registries import this package by name on their first
lookup (``genlab.registry.EXTENSIONS``), so the names are there wherever a registry is used.
"""

from genlab.derived import (  # noqa: F401 - importing a module registers its component
    arrow_library,
    from_run,
    frozen_features,
    lm_ensemble,
    lora_hub,
    soup,
    task_probes,
    unic,
    useful,
    wise,
    zoo_dg,
)
