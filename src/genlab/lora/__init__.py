"""Low-rank adapters through PEFT (the optional extra ``genlab[lora]``), and their composition
(LoraHub, Huang et al. 2023, #2). PEFT is imported lazily: ``require_peft`` raises a
``SpecError`` (exit 2) naming the extra when it is missing.

Floor: the bottom (imports ``errors``); LoRA libraries stored as runs are
``genlab.derived.lora_library``.
"""

from __future__ import annotations

from types import ModuleType

from genlab.errors import SpecError


def require_peft() -> ModuleType:
    """The ``peft`` module, or a ``SpecError`` saying how to install it."""
    try:
        import peft
    except ImportError:
        raise SpecError(
            "LoRA needs the optional extra genlab[lora] (PEFT): pip install 'genlab[lora]'"
        ) from None
    return peft


def require_nevergrad() -> ModuleType:
    """The ``nevergrad`` module (LoraHub's gradient-free search), or a ``SpecError``."""
    try:
        import nevergrad
    except ImportError:
        raise SpecError(
            "LoraHub needs the optional extra genlab[lora] (nevergrad): pip install 'genlab[lora]'"
        ) from None
    return nevergrad
