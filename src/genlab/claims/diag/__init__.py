"""Diagnostics claims (catalogue cluster C6): measurements that should tell, from the training data
or the architecture alone, whether and how a model generalizes (coherence, GWA, margins,
sharpness, function complexity, influence, inductive bias, feature diversity)."""
