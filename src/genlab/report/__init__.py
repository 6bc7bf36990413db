"""Reports: tables and plots computed from what the store holds.

The only package that draws: matplotlib's non-interactive backend is chosen here, once, before any
module of the package imports pyplot (no display is needed, in CI or on a cluster node).
"""

import matplotlib

matplotlib.use("Agg")
