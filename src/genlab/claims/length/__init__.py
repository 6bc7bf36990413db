"""Length-generalization claims (catalogue cluster C2): train on short inputs, test on longer ones."""
