"""Prediction-space combinations of finished runs and the analyses that read their features.

- ``predictions``: probability averaging and linear interpolation with weights fitted by EM on a
  dev split, and perplexity (Herel & Mikolov, #69);
- ``kneser_ney``: an interpolated Kneser-Ney n-gram language model (the classic ensemble member);
- ``probe``: linear-probe accuracy of a model's frozen features on a task (UNIC, #77);
- ``zoo``: a model zoo for domain generalization, its diversity and correlation shift estimates
  and a source-fitted combination (Chen et al., #48).

Floor: registries, above ``methods`` (features by ``methods.dg_shared``), below ``probes`` and
``derived``.
"""
