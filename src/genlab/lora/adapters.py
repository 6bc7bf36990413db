"""Attach a rank-r LoRA (Hu et al. 2021) to the linear layers of a genlab model through PEFT,
and read adapter tensors (a run's adapter is saved as a store artifact by
``genlab.derived.lora_library``). The init of ``A`` comes from ``init_seed`` so that a library of task LoRAs shares it,
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


def load_adapter(path: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(path))
