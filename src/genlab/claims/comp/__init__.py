"""Compositional-generalization claims (catalogue cluster C3): new combinations of known parts —
SCAN's splits, coverage, instruction diversity, in-context forcing, skill composition, gCOG,
creativity, systematic inference, augmentation and injected features (docs/compositional.md)."""
