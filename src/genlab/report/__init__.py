"""Reports: tables and plots computed from what the store holds.

The only package that draws: matplotlib's non-interactive backend is chosen here, once, before any
module of the package imports pyplot (no display is needed, in CI or on a cluster node).

Floor: above sweeps, the store and ``analysis``; below ``zoo``, ``claims`` (which use its figure
kinds) and the CLI. It is given the claims, never imports them.
"""

import matplotlib

matplotlib.use("Agg")
