"""A tiny mixture-of-experts transformer with top-1 routing, whose routes are recorded.

Scaled down from the OLMoE setting of Li, Fan & Zhou (2025, catalogue #38), where a sample's
*pathway* is its sequence of expert choices across layers. Pre-norm blocks of causal self-attention
and an MoE feed-forward layer: a linear router picks one of ``n_experts`` GELU MLPs per token and
scales its output by the router probability (Switch-Transformer style). After each forward pass
``model.routes`` holds the chosen experts, shape ``(N, n_layers, T)``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params


class MoEParams(Params):
    """Params of ``moe_transformer``."""

    d_model: int = Field(64, ge=1)
    n_layers: int = Field(2, ge=1)
    n_heads: int = Field(4, ge=1)
    n_experts: int = Field(4, ge=1)
    d_mlp: int = Field(128, ge=1, description="hidden width of each expert")


class MoELayer(nn.Module):
    """Top-1 routed GELU experts; ``last_route`` keeps the chosen expert per token."""

    def __init__(self, d: int, d_mlp: int, n_experts: int) -> None:
        super().__init__()
        self.router = nn.Linear(d, n_experts)
        self.w1 = nn.Parameter(torch.randn(n_experts, d, d_mlp) / d**0.5)
        self.b1 = nn.Parameter(torch.zeros(n_experts, d_mlp))
        self.w2 = nn.Parameter(torch.randn(n_experts, d_mlp, d) / d_mlp**0.5)
        self.last_route = torch.zeros(0, dtype=torch.long)

    def forward(self, h: Tensor) -> Tensor:
        gate = self.router(h).softmax(-1)  # (N, T, E)
        prob, idx = gate.max(-1)
        self.last_route = idx.detach()
        flat, chosen = h.reshape(-1, h.shape[-1]), idx.reshape(-1)
        out = torch.zeros_like(flat)
        for e in range(self.w1.shape[0]):  # each expert on its own tokens only (top-1 dispatch)
            rows = (chosen == e).nonzero(as_tuple=True)[0]
            if len(rows):
                y = F.gelu(flat[rows] @ self.w1[e] + self.b1[e]) @ self.w2[e]
                out = out.index_add(0, rows, y)
        return prob.unsqueeze(-1) * out.view_as(h)


class Block(nn.Module):
    def __init__(self, p: MoEParams) -> None:
        super().__init__()
        if p.d_model % p.n_heads:
            raise ValueError(f"d_model ({p.d_model}) must be divisible by n_heads ({p.n_heads})")
        self.n_heads = p.n_heads
        self.ln1, self.ln2 = nn.LayerNorm(p.d_model), nn.LayerNorm(p.d_model)
        self.qkv, self.proj = nn.Linear(p.d_model, 3 * p.d_model), nn.Linear(p.d_model, p.d_model)
        self.moe = MoELayer(p.d_model, p.d_mlp, p.n_experts)

    def forward(self, h: Tensor) -> Tensor:
        n, t, d = h.shape
        qkv = self.qkv(self.ln1(h)).view(n, t, 3, self.n_heads, d // self.n_heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = h + self.proj(a.transpose(1, 2).reshape(n, t, d))
        return h + self.moe(self.ln2(h))


class MoETransformer(nn.Module):
    """Token + learned position embeddings, ``n_layers`` MoE blocks, the last position's logits."""

    def __init__(self, p: MoEParams, info: TaskInfo) -> None:
        super().__init__()
        if info.vocab_size is None or info.seq_len is None or info.kind != "classification":
            raise ValueError("moe_transformer needs a token classification task")
        self.embed = nn.Embedding(info.vocab_size, p.d_model)
        self.pos = nn.Parameter(torch.randn(info.seq_len, p.d_model) * 0.02)
        self.blocks = nn.ModuleList(Block(p) for _ in range(p.n_layers))
        self.ln_f = nn.LayerNorm(p.d_model)
        self.unembed = nn.Linear(p.d_model, info.n_outputs)

    @property
    def routes(self) -> Tensor:
        """Expert choices of the last forward pass, ``(N, n_layers, T)``."""
        return torch.stack([b.moe.last_route for b in self.blocks], dim=1)

    def forward(self, x: Tensor) -> Tensor:
        h = self.embed(x) + self.pos[: x.shape[1]]
        for block in self.blocks:
            h = block(h)
        return self.unembed(self.ln_f(h[:, -1]))


@MODELS.register(
    "moe_transformer",
    MoEParams,
    papers=(38,),
    tiny={"d_model": 16, "n_heads": 2, "n_layers": 1, "n_experts": 2, "d_mlp": 16},
)
def moe_transformer(params: MoEParams, info: TaskInfo) -> nn.Module:
    """Tiny top-1 mixture-of-experts transformer that records its routing pathways (#38)."""
    return MoETransformer(params, info)
