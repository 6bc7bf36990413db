"""Attach a rank-r LoRA (Hu et al. 2021) to the linear layers of a genlab model through PEFT,
read a trained run's adapter out of its checkpoint, and save it as a store artifact
(safetensors). The init of ``A`` comes from ``init_seed`` so that a library of task LoRAs shares it,
which keeps LoraHub's element-wise merge of ``A`` and ``B`` meaningful (#2)."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from genlab.lora import require_peft

LORA_KEY = "lora_"


def attach(
    model: nn.Module, rank: int, alpha: float, init_seed: int, where: str = "all"
) -> nn.Module:
    """``model`` wrapped by PEFT with a LoRA on each ``nn.Linear`` (``where="head"``: on the last
    one only); only the adapters train."""
    peft = require_peft()
    targets = [n for n, m in model.named_modules() if isinstance(m, nn.Linear)]
    if not targets:
        raise ValueError("LoRA needs a model with linear layers")
    targets = targets[-1:] if where == "head" else targets
    config = peft.LoraConfig(r=rank, lora_alpha=alpha, target_modules=targets, lora_dropout=0.0)
    with torch.random.fork_rng():
        torch.manual_seed(init_seed)
        return peft.get_peft_model(model, config)


def adapter_state(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The LoRA tensors of a PEFT model's state dict (``...lora_A.default.weight``, ...)."""
    return {k: v for k, v in state.items() if LORA_KEY in k}


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


def load_adapter(path: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(path))


def train_library(
    store, base: dict, loras: list[dict], info
) -> tuple[nn.Module, list[dict[str, torch.Tensor]]]:
    """Train (or find in ``store``) the run ``base`` and one LoRA run per spec of ``loras``
    fine-tuned from it; return the base model with its weights and the adapters' tensors. Shared
    by the stored LoRA libraries of ``lora_hub`` (#2) and ``arrow_library`` (#89)."""
    from genlab.engine import run_spec
    from genlab.spec import parse_spec
    from genlab.weights.load import build_plain, finished_spec, load_into, plain_state

    base_id = run_spec(parse_spec(base), store, progress=False, wait=True).run_id
    adapters = []
    for d in loras:
        d["model"] = {"name": "from_run", "params": {"run": base_id}}
        rid = run_spec(parse_spec(d), store, progress=False, wait=True).run_id
        adapters.append(load_adapter(save_adapter(store, rid)))
    model = build_plain(store, finished_spec(store, base_id), info)
    load_into(model, plain_state(store, base_id), f"run {base_id}")
    return model, adapters
