"""Weight-space and prediction ensembles, model zoos and distillation (catalogue cluster C5)."""
