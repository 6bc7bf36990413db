"""Modular-LoRA claims (catalogue cluster C9): reaching an unseen task by composing modules
trained on others (LoraHub #2)."""
