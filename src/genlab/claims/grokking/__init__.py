"""Grokking claims (catalogue cluster C1): generalization long after fitting, on algorithmic data."""
