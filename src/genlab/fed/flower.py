"""Flower (``flwr``) is the ``genlab[fl]`` extra: import it here, or say which extra to install."""

from __future__ import annotations

import importlib
import logging
from types import ModuleType

from genlab.errors import SpecError

EXTRA_HINT = "federated runs need Flower: pip install 'genlab[fl]'"


def require_flwr() -> ModuleType:
    """Import ``flwr`` (quietened to warnings), or raise ``SpecError`` (exit 2) naming the extra."""
    try:
        flwr = importlib.import_module("flwr")
    except ImportError:
        raise SpecError(EXTRA_HINT) from None
    logging.getLogger("flwr").setLevel(logging.WARNING)
    return flwr
