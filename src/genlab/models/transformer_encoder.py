"""The transformer of Delétang et al., "Neural Networks and the Chomsky Hierarchy" (ICLR 2023, #62):
an encoder, not a decoder. Every position attends to every other (no causal mask), so the blank
slots where a transduction task's answer is written see the whole input at once; padding keys
(``info.extra["pad"]``) are masked out, so a row's outputs do not depend on how far it is padded.

The blocks are ``transformer.Block`` (pre-norm, GELU) with the causal mask switched off; the
paper's code uses post-norm blocks with a ReLU MLP, dropout 0.1, 5 layers, width 64, 8 heads.
Relative encodings whose bias assumes causal distances (``t5``, ``alibi``, ``fire``) are refused.
"""

from __future__ import annotations

from pydantic import model_validator
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.models.transformer import Transformer, TransformerParams

ENCODER_POSITIONAL = ("none", "learned", "sinusoidal", "rope")


class EncoderParams(TransformerParams):
    """Params of ``transformer_encoder`` (those of ``transformer``; absolute or rotary positions)."""

    @model_validator(mode="after")
    def _positions(self) -> EncoderParams:
        if self.positional not in ENCODER_POSITIONAL:
            raise ValueError(
                f"positional: the encoder takes {', '.join(ENCODER_POSITIONAL)}, got "
                f"{self.positional!r} (its attention bias assumes causal distances)"
            )
        return self


class TransformerEncoder(Transformer):
    """``Transformer`` with bidirectional attention and padding keys masked out."""

    def __init__(self, p: EncoderParams, info: TaskInfo) -> None:
        super().__init__(p, info)
        for block in self.blocks:
            block.attn.causal = False
        pad = info.extra.get("pad")
        self.pad = None if pad is None else int(pad)

    def keys(self, x: Tensor) -> Tensor | None:
        return None if self.pad is None else x != self.pad


@MODELS.register(
    "transformer_encoder",
    EncoderParams,
    papers=(62,),
    tiny={"d_model": 16, "n_layers": 1, "n_heads": 2},
)
def transformer_encoder(params: EncoderParams, info: TaskInfo) -> nn.Module:
    """Encoder-only transformer (bidirectional attention) of Delétang et al. (#62)."""
    return TransformerEncoder(params, info)
