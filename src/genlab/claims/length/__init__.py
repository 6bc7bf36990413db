"""Length-generalization claims (catalogue cluster C2): train on short inputs, test on longer ones."""

from genlab.claims.length._legacy import *  # noqa: F403 - until the family's migration lands
