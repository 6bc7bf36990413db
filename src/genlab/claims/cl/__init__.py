"""Continual-learning claims (catalogue cluster C9): learning a sequence of tasks without
forgetting (Model Zoo #120, fast/slow weights #95)."""
