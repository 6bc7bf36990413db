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

The paper's own network (its code, github.com/eboix/relational-reasoning, ``experiments/models.py``)
differs in three ways, each an option here (the defaults keep the form above):

- ``causal=False``: every position attends to every other (the paper's encoder is bidirectional);
- ``readout="cls"``: a learned CLS token (initialised N(0, 1), as the paper's) is appended after
  the input, with a position of its own, and classification reads it (``"last"``: the last
  input token). The input itself never contains the label, so no readout can see the answer;
- ``identity_scale``: ``"sqrt_dhead"`` (ours) divides ``x x^T`` by ``sqrt(d_head)``; a number
  ``c`` multiplies it instead (the paper's ``wkwq_id_mult``, 1.0 by default in its code, with
  ``a_h`` started at 0: ``identity_init=0``). ``identity_vo_scale`` multiplies the value term the
  same way (the paper's ``wvwo_id_mult``, 1.0 by default; ours has always been 1.0). Under Adam a
  multiplier on a parameter started at 0 acts as a larger learning rate for it.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from pydantic import Field, model_validator
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.models.positional import PositionalEncoding
from genlab.models.transformer import Attention, Transformer, TransformerParams
from genlab.models.transformer_encoder import ENCODER_POSITIONAL


class SymbolicParams(TransformerParams):
    """Params of ``transformer_symbolic``: the transformer's, plus which identity terms to add."""

    identity_qk: bool = Field(True, description="add a_h * x x^T to each head's attention scores")
    identity_vo: bool = Field(True, description="add b_h * A_h x to the attention output")
    identity_init: float = Field(1.0, ge=-100, le=100, description="initial a_h and b_h")
    identity_scale: Literal["sqrt_dhead"] | float = Field(
        "sqrt_dhead",
        description="x x^T in the scores: divided by sqrt(d_head), or times this number (paper)",
    )
    identity_vo_scale: float = Field(1.0, description="multiplier of the b_h value term")
    causal: bool = Field(True, description="causal attention; False attends both ways (paper)")
    readout: Literal["last", "cls"] = Field(
        "last", description="classify from the last token, or from an appended CLS token (paper)"
    )

    # the paper-form params at their defaults: left out of the run id, as before they existed
    quiet_defaults = {
        "identity_scale": "sqrt_dhead",
        "identity_vo_scale": 1.0,
        "causal": True,
        "readout": "last",
    }

    @model_validator(mode="after")
    def _bidirectional_positions(self) -> SymbolicParams:
        if not self.causal and self.positional not in ENCODER_POSITIONAL:
            raise ValueError(
                f"positional: causal=False takes {', '.join(ENCODER_POSITIONAL)}, got "
                f"{self.positional!r} (its attention bias assumes causal distances)"
            )
        return self


class SymbolicAttention(Attention):
    """Self-attention (causal unless ``causal=False``) with the per-head identity terms ``a_h``
    (scores) and ``b_h`` (values)."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        dropout: float,
        pos: PositionalEncoding,
        identity_qk: bool,
        identity_vo: bool,
        init: float = 1.0,
        scale: str | float = "sqrt_dhead",
        vo_scale: float = 1.0,
        causal: bool = True,
    ) -> None:
        super().__init__(d_model, n_heads, dropout, pos)
        self.identity_qk, self.identity_vo = identity_qk, identity_vo
        self.causal = causal
        self.qk_mult = None if scale == "sqrt_dhead" else float(scale)  # None: / sqrt(d_head)
        self.vo_mult = float(vo_scale)
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
            gram = h @ h.transpose(-1, -2)  # (n, t, t)
            gram = gram / math.sqrt(dh) if self.qk_mult is None else gram * self.qk_mult
            scores = scores + self.a.view(1, -1, 1, 1) * gram.unsqueeze(1)
        bias = self.pos.attention_bias(t)
        if bias is not None:
            scores = scores + bias.to(h.dtype)
        if self.causal:
            causal = h.new_ones(t, t, dtype=torch.bool).tril()
            scores = scores.masked_fill(~causal, float("-inf"))
        if last_only:
            scores = scores[:, :, -1:]
        attn = self.drop(scores.softmax(-1))
        y = self.out((attn @ v).transpose(1, 2).reshape(n, attn.shape[2], d))
        if self.identity_vo:  # sum_h b_h * A_h x, in model space
            y = y + self.vo_mult * torch.einsum("h,nhqk,nkd->nqd", self.b, attn, h)
        return y


class SymbolicTransformer(Transformer):
    """``Transformer`` whose attention layers are ``SymbolicAttention`` (same initial weights);
    with ``readout="cls"`` a CLS token is appended after the input and classification reads it."""

    def __init__(self, p: SymbolicParams, info: TaskInfo) -> None:
        cls = p.readout == "cls"
        if cls:
            if info.kind != "classification":
                raise ValueError("readout='cls' needs a classification task")
            longest = p.max_len or info.extra.get("max_length") or info.seq_len or 512
            p = p.model_copy(update={"max_len": longest + 1})  # one more position: the CLS
        super().__init__(p, info)
        self.cls = nn.Parameter(torch.randn(1, 1, p.d_model)) if cls else None
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
                p.identity_scale,
                p.identity_vo_scale,
                p.causal,
            )
            new.qkv.load_state_dict(old.qkv.state_dict())
            new.out.load_state_dict(old.out.state_dict())
            block.attn = new

    def inputs(self, x: Tensor) -> Tensor:
        h = super().inputs(x)
        if self.cls is None:
            return h
        return torch.cat([h, self.cls.expand(x.shape[0], 1, -1)], dim=1)


@MODELS.register(
    "transformer_symbolic",
    SymbolicParams,
    papers=(96,),
    tiny={"d_model": 16, "n_layers": 1, "n_heads": 2},
)
def transformer_symbolic(params: SymbolicParams, info: TaskInfo) -> nn.Module:
    """Decoder-only transformer with two identity parameters per head (Boix-Adsera et al., #96)."""
    return SymbolicTransformer(params, info)
