"""Federated learning under heterogeneity, on Flower (issue 15; FedImpro #1, FedLoG #78).

``splits`` (client splits) needs no Flower, nor does the ``fed`` table of a run spec
(``genlab.spec.FedSpec``); the rest (``client``, ``strategies``, ``grid``, ``runner``) import
``flwr``, the ``genlab[fl]`` extra.
"""
