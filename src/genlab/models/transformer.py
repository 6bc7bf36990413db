"""A small decoder-only transformer you can read top to bottom (after nanoGPT).

Pre-norm blocks of causal self-attention and a GELU MLP. Positional information comes from a
pluggable ``PositionalEncoding`` (see ``positional.py``). Classification tasks read the logits at
the last position only, which is all that grokking's ``[a, b, =]`` needs (Power et al., #55), and
the last block then computes that position alone.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.models.positional import POSITIONAL, PositionalEncoding, PositionalName
from genlab.registry import Params


class TransformerParams(Params):
    """Params of ``transformer``."""

    d_model: int = Field(128, ge=1)
    n_layers: int = Field(2, ge=1)
    n_heads: int = Field(4, ge=1)
    d_mlp: int | None = Field(None, ge=1, description="MLP width; default 4 * d_model")
    dropout: float = Field(0.0, ge=0, lt=1)
    positional: PositionalName = Field("learned", description="positional encoding")
    max_len: int | None = Field(None, ge=1, description="longest input; default the task's")
    layer_norm: bool = True


class Attention(nn.Module):
    causal = True  # an encoder (``transformer_encoder``) sets it False on its instances

    def __init__(self, d_model: int, n_heads: int, dropout: float, pos: PositionalEncoding):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.n_heads, self.dropout, self.pos = n_heads, dropout, pos
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, h: Tensor, last_only: bool = False, keep: Tensor | None = None) -> Tensor:
        """Causal self-attention; with ``last_only`` only the last position queries (all keys).
        Not causal when ``self.causal`` is False: every query sees every key where ``keep``
        (``(n, t)`` bool, default all) is True."""
        n, t, d = h.shape
        q, k, v = self.qkv(h).view(n, t, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        q, k = self.pos.rotate(q, k)
        bias = self.pos.attention_bias(t)
        p = self.dropout if self.training else 0.0
        if not self.causal:
            mask = None if keep is None else keep[:, None, None, :]
            if last_only:
                q = q[:, :, -1:]
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        elif last_only:  # the last query sees every key: no mask needed
            q = q[:, :, -1:]
            mask = None if bias is None else bias[..., -1:, :].to(h.dtype)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        elif bias is None:
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        else:
            causal = h.new_ones(t, t, dtype=torch.bool).tril()
            mask = bias.to(h.dtype).masked_fill(~causal, float("-inf"))
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        return self.out(y.transpose(1, 2).reshape(n, q.shape[2], d))


class Block(nn.Module):
    def __init__(self, p: TransformerParams, pos: PositionalEncoding) -> None:
        super().__init__()
        norm = nn.LayerNorm if p.layer_norm else nn.Identity
        self.ln1, self.ln2 = norm(p.d_model), norm(p.d_model)
        self.attn = Attention(p.d_model, p.n_heads, p.dropout, pos)
        d_mlp = p.d_mlp or 4 * p.d_model
        self.mlp = nn.Sequential(
            nn.Linear(p.d_model, d_mlp),
            nn.GELU(),
            nn.Linear(d_mlp, p.d_model),
            nn.Dropout(p.dropout),
        )

    def forward(self, h: Tensor, last_only: bool = False, keep: Tensor | None = None) -> Tensor:
        x = self.ln1(h)
        a = self.attn(x, last_only) if keep is None else self.attn(x, last_only, keep=keep)
        h = (h[:, -1:] if last_only else h) + a
        return h + self.mlp(self.ln2(h))


class Transformer(nn.Module):
    """Token embedding, positional encoding, ``n_layers`` blocks, final norm, unembedding."""

    def __init__(self, p: TransformerParams, info: TaskInfo) -> None:
        super().__init__()
        if info.vocab_size is None:
            raise ValueError("the transformer needs a token task (info.vocab_size)")
        longest = info.extra.get("max_length")  # the longest test input, for length tasks
        self.max_len = p.max_len or longest or info.seq_len or 512
        if longest is not None and self.max_len < longest:
            raise ValueError(
                f"model.params.max_len ({self.max_len}) is below the task's longest input "
                f"({longest}); raise max_len or shorten the test lengths"
            )
        self.last_only = info.kind == "classification"
        self.embed = nn.Embedding(info.vocab_size, p.d_model)
        self.pos = POSITIONAL[p.positional](p.d_model, p.n_heads, self.max_len)
        self.blocks = nn.ModuleList(Block(p, self.pos) for _ in range(p.n_layers))
        self.ln_f = nn.LayerNorm(p.d_model) if p.layer_norm else nn.Identity()
        self.unembed = nn.Linear(p.d_model, info.n_outputs)

    def keys(self, x: Tensor) -> Tensor | None:
        """Which keys each row's queries may attend to, ``(n, t)`` bool (None: all; an encoder
        masks padding)."""
        return None

    def inputs(self, x: Tensor) -> Tensor:
        """The embedded sequence the blocks read, ``(n, t, d)`` before positions (a subclass may
        append tokens, e.g. a CLS token)."""
        return self.embed(x)

    def forward(self, x: Tensor) -> Tensor:
        h = self.inputs(x)
        if h.shape[1] > self.max_len:
            raise ValueError(
                f"input of {h.shape[1]} positions exceeds the model's max_len {self.max_len}"
            )
        h, keep = self.pos.add_to_input(h), self.keys(x)
        for i, block in enumerate(self.blocks):
            # Classification reads the last position only, so the last block computes only it:
            # the same numbers as slicing afterwards, for about a third less work on [a, b, =].
            h = block(h, last_only=self.last_only and i == len(self.blocks) - 1, keep=keep)
        if self.last_only:
            h = h[:, -1]
        return self.unembed(self.ln_f(h))


@MODELS.register(
    "transformer",
    TransformerParams,
    papers=(55, 100),
    tiny={"d_model": 16, "n_layers": 1, "n_heads": 2},
)
def transformer(params: TransformerParams, info: TaskInfo) -> nn.Module:
    """Decoder-only transformer with a pluggable positional encoding (nanoGPT-style); Power et
    al.'s grokking model (#55) and the positional-encoding study of Kazemnejad et al. (#100)."""
    return Transformer(params, info)
