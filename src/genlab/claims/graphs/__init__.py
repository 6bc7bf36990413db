"""Graph neural networks on PyTorch Geometric: anisotropic message passing (SIR-GCN, #35)."""
