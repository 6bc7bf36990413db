"""Domain-generalization claims (catalogue cluster C4): held-out domains, contexts and shifts.

Merge shim (remove when the migration of ``claims/dg.py`` into this package lands, issue 12):
this package shadows the legacy module ``claims/dg.py``, so it loads that file under another name
and re-exports it, keeping its claims registered and its helpers importable.
"""

import importlib.util
import sys
from pathlib import Path

_LEGACY = Path(__file__).parent.parent / "dg.py"
if _LEGACY.is_file():
    _spec = importlib.util.spec_from_file_location("genlab.claims._dg_legacy", _LEGACY)
    assert _spec is not None and _spec.loader is not None
    _mod = importlib.util.module_from_spec(_spec)
    sys.modules[_spec.name] = _mod
    _spec.loader.exec_module(_mod)
    globals().update({k: v for k, v in vars(_mod).items() if not k.startswith("__")})
