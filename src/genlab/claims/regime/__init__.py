"""How a network is trained: batch size and number of updates, upsampling (catalogue cluster C7)."""
