"""The two kinds of failure the command line tells apart.

``SpecError`` is bad input (exit code 2, nothing written); ``StoreError`` is a store that cannot be
used (not a genlab database, read-only, locked). Everything else is the work failing (exit code 1).
Neither subclasses ``ValueError``, so pydantic validators let them through unchanged.
"""


class GenlabError(Exception):
    """Base class of genlab's own errors; the message is meant for the user as it stands."""

    exit_code = 1


class SpecError(GenlabError):
    """Bad input: an unknown name, a wrong type or an impossible value. Exit code 2."""

    exit_code = 2


class StoreError(GenlabError):
    """A store that is not a genlab database, cannot be written, or cannot be found. Exit code 2."""

    exit_code = 2
