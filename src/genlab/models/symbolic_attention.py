"""Attention with two extra trainable parameters per head (Boix-Adsera et al., abstract symbols, #96).

Boix-Adsera et al. ("When can transformers reason with abstract symbols?", ICLR 2024, catalogue
#96) add identity-scaled terms to each head's query-key and value-output products:
``W_Q W_K^T + a_h I`` and ``W_V W_O + b_h I``. Here that is, per head ``h`` with input ``x`` (the
block's normalised input):

    scores_h = q_h k_h^T / sqrt(d_head) + a_h * x x^T / sqrt(d_head)
    out      = W_O concat_h(A_h v_h) + sum_h b_h * A_h x

so ``a_h`` lets a head attend to tokens equal to the query token whatever their embedding (the
identity term compares raw embeddings, which works for symbols never seen in training), and
``b_h`` copies the attended embeddings themselves into the residual stream. Every other weight is
initialised exactly as ``transformer`` with the same seed; ``a_h`` and ``b_h`` start at
``identity_init`` (1.0, our choice: started at 0 they stayed near 0 in our CPU-sized runs, the
network memorising the training symbols first). The model ``transformer_symbolic`` takes every
``transformer`` param plus ``identity_qk``, ``identity_vo`` (switch each term on or off) and
``identity_init``.
"""

from __future__ import annotations

import math

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.models.positional import PositionalEncoding
from genlab.models.transformer import Attention, Transformer, TransformerParams


class SymbolicParams(TransformerParams):
    """Params of ``transformer_symbolic``: the transformer's, plus which identity terms to add."""

    identity_qk: bool = Field(True, description="add a_h * x x^T to each head's attention scores")
    identity_vo: bool = Field(True, description="add b_h * A_h x to the attention output")
    identity_init: float = Field(1.0, ge=-100, le=100, description="initial a_h and b_h")


class SymbolicAttention(Attention):
    """Causal self-attention with the per-head identity terms ``a_h`` (scores), ``b_h`` (values)."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        dropout: float,
        pos: PositionalEncoding,
        identity_qk: bool,
        identity_vo: bool,
        init: float = 1.0,
    ) -> None:
        super().__init__(d_model, n_heads, dropout, pos)
        self.identity_qk, self.identity_vo = identity_qk, identity_vo
        self.a = nn.Parameter(torch.full((n_heads,), float(init)))
        self.b = nn.Parameter(torch.full((n_heads,), float(init)))
        self.drop = nn.Dropout(dropout)

    def forward(self, h: Tensor, last_only: bool = False) -> Tensor:
        """Explicit attention weights (the value term needs them); ``last_only`` as in the base."""
        n, t, d = h.shape
        dh = d // self.n_heads
        q, k, v = self.qkv(h).view(n, t, 3, self.n_heads, dh).permute(2, 0, 3, 1, 4)
        q, k = self.pos.rotate(q, k)
        scores = q @ k.transpose(-1, -2) / math.sqrt(dh)  # (n, heads, t, t)
        if self.identity_qk:
            gram = (h @ h.transpose(-1, -2)) / math.sqrt(dh)  # (n, t, t)
            scores = scores + self.a.view(1, -1, 1, 1) * gram.unsqueeze(1)
        bias = self.pos.attention_bias(t)
        if bias is not None:
            scores = scores + bias.to(h.dtype)
        causal = h.new_ones(t, t, dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        if last_only:
            scores = scores[:, :, -1:]
        attn = self.drop(scores.softmax(-1))
        y = self.out((attn @ v).transpose(1, 2).reshape(n, attn.shape[2], d))
        if self.identity_vo:  # sum_h b_h * A_h x, in model space
            y = y + torch.einsum("h,nhqk,nkd->nqd", self.b, attn, h)
        return y


class SymbolicTransformer(Transformer):
    """``Transformer`` whose attention layers are ``SymbolicAttention`` (same initial weights)."""

    def __init__(self, p: SymbolicParams, info: TaskInfo) -> None:
        super().__init__(p, info)
        for block in self.blocks:
            old = block.attn
            new = SymbolicAttention(
                p.d_model,
                p.n_heads,
                p.dropout,
                self.pos,
                p.identity_qk,
                p.identity_vo,
                p.identity_init,
            )
            new.qkv.load_state_dict(old.qkv.state_dict())
            new.out.load_state_dict(old.out.state_dict())
            block.attn = new


@MODELS.register(
    "transformer_symbolic",
    SymbolicParams,
    papers=(96,),
    tiny={"d_model": 16, "n_layers": 1, "n_heads": 2},
)
def transformer_symbolic(params: SymbolicParams, info: TaskInfo) -> nn.Module:
    """Decoder-only transformer with two identity parameters per head (Boix-Adsera et al., #96)."""
    return SymbolicTransformer(params, info)
