"""Stored LoRA libraries: a base run and LoRA runs fine-tuned from it, trained (or found) in the
store, and each LoRA run's adapter saved as a store artifact (safetensors). Shared by
``lora_hub`` (#2) and ``arrow_library`` (#89); the adapters themselves are ``genlab.lora.adapters``.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from genlab.lora.adapters import adapter_state, load_adapter


def save_adapter(store, run_id: str) -> Path:
    """Write run ``run_id``'s adapter to ``runs/<id>/lora.safetensors`` and register it as the
    run's ``lora`` artifact (done once; later calls return the file)."""
    from safetensors.torch import save_file

    from genlab.engine import checkpoint

    path = store.run_dir(run_id) / "lora.safetensors"
    if not path.is_file():
        state = checkpoint.load(store.run_dir(run_id) / checkpoint.FINAL)
        if state is None:
            raise ValueError(f"run {run_id} has no final checkpoint")
        save_file({k: v.contiguous() for k, v in adapter_state(state["model"]).items()}, path)
        store.add_artifact(run_id, "lora", path)
    return path


def train_library(
    store, base: dict, loras: list[dict], info
) -> tuple[nn.Module, list[dict[str, torch.Tensor]]]:
    """Train (or find in ``store``) the run ``base`` and one LoRA run per spec of ``loras``
    fine-tuned from it; return the base model with its weights and the adapters' tensors. Shared
    by the stored LoRA libraries of ``lora_hub`` (#2) and ``arrow_library`` (#89)."""
    from genlab.derived.runs import train_run
    from genlab.weights.load import build_plain, finished_spec, load_into, plain_state

    base_id = train_run(base, store)
    adapters = []
    for d in loras:
        d["model"] = {"name": "from_run", "params": {"run": base_id}}
        rid = train_run(d, store)
        adapters.append(load_adapter(save_adapter(store, rid)))
    model = build_plain(store, finished_spec(store, base_id), info)
    load_into(model, plain_state(store, base_id), f"run {base_id}")
    return model, adapters
