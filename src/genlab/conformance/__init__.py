"""Conformance: what every registered task, model, method and probe must do, checked on a tiny
configuration of each (after scikit-learn's ``check_estimator``). ``tests/test_conformance.py``
runs every check on every component found in the registries, so a new component is covered by
adding its file; a plugin's components can be checked the same way:

    from genlab.conformance import Tiny, checks
    tiny = Tiny("/tmp/fixtures")
    spec = checks.check_tiny(tiny, "model", "my_model")
    checks.check_step(spec, "model my_model")

Floor: the top, beside the CLI: the test kit, imported by tests and the CLI only
(``tests/test_architecture.py``).
"""

from genlab.conformance import checks
from genlab.conformance.tiny import NotTiny, Tiny, components, tiny_run

__all__ = ["NotTiny", "Tiny", "checks", "components", "tiny_run"]
