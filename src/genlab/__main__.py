"""``python -m genlab`` is the ``genlab`` command."""

from genlab.cli import main

main()
