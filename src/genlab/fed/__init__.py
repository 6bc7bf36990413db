"""Federated learning under heterogeneity, on Flower (issue 15; FedImpro #1, FedLoG #78).

``splits`` (client splits) and ``spec`` (the ``fed`` table of a run spec) need no Flower; the
rest (``client``, ``strategies``, ``grid``, ``runner``) import ``flwr``, the ``genlab[fl]`` extra.
"""
