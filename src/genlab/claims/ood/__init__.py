"""Out-of-distribution claims (catalogue cluster C4, family "ood"): the value of OOD data, feature
contamination, intermediate-layer probes."""
