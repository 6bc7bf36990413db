"""Federated-learning claims (cluster C8): FedImpro (#1)."""
