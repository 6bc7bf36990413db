"""``vit_tiny``: a small Vision Transformer for digit-sized images, LayerNorm in every block.

For GenD (Yermakov, Cech, Matas & Fritz 2025, "Deepfake detection that generalizes across
benchmarks", catalogue #118), which fine-tunes only the LayerNorm parameters of a pre-trained ViT
(CLIP ViT-L/14): the same layout at a laptop's size. The image is cut into ``patch x patch``
patches, each linearly embedded, a learned class token and learned positional embeddings are
added, then ``depth`` pre-LN blocks (``x + attn(LN(x))``, ``x + mlp(LN(x))``, GELU) and a final
LayerNorm; the class token's output is the feature (``featurize``) read by a linear
``classifier``. ``layernorm_names`` lists the LayerNorm parameters (what GenD trains).

Params: ``patch`` (must divide the image side), ``d_model``, ``depth``, ``heads``, ``mlp_ratio``.
"""

from __future__ import annotations

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params


class ViTTinyParams(Params):
    """Params of ``vit_tiny``."""

    patch: int = Field(2, ge=1, le=16, description="patch side in pixels (divides the image side)")
    d_model: int = Field(48, ge=4, le=512, description="token width (a multiple of heads)")
    depth: int = Field(2, ge=1, le=12, description="transformer blocks")
    heads: int = Field(4, ge=1, le=16)
    mlp_ratio: int = Field(2, ge=1, le=8, description="MLP hidden width / d_model")


class Block(nn.Module):
    """Pre-LN transformer block: ``x + attn(LN(x))``, then ``x + mlp(LN(x))``."""

    def __init__(self, d: int, heads: int, ratio: int) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, ratio * d), nn.GELU(), nn.Linear(ratio * d, d))

    def forward(self, x: Tensor) -> Tensor:
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class ViTTiny(nn.Module):
    """Patch embedding, class token, pre-LN blocks, final LayerNorm, linear classifier."""

    def __init__(self, p: ViTTinyParams, info: TaskInfo) -> None:
        super().__init__()
        if info.kind != "classification" or len(info.input_shape) != 3:
            raise ValueError("the vit_tiny model needs a classification task with (C, H, W) images")
        c, h, w = info.input_shape
        if h % p.patch or w % p.patch:
            raise ValueError(f"model.params.patch: {p.patch} must divide the image side ({h}x{w})")
        if p.d_model % p.heads:
            raise ValueError(
                f"model.params.d_model: {p.d_model} must be a multiple of heads ({p.heads})"
            )
        self.patch = p.patch
        n_tokens = (h // p.patch) * (w // p.patch)
        self.embed = nn.Linear(c * p.patch * p.patch, p.d_model)
        self.cls = nn.Parameter(torch.zeros(1, 1, p.d_model))
        self.pos = nn.Parameter(0.02 * torch.randn(1, n_tokens + 1, p.d_model))
        self.blocks = nn.ModuleList(Block(p.d_model, p.heads, p.mlp_ratio) for _ in range(p.depth))
        self.ln_f = nn.LayerNorm(p.d_model)
        self.n_features = p.d_model
        self.classifier = nn.Linear(p.d_model, info.n_outputs)

    def tokens(self, x: Tensor) -> Tensor:
        """``(N, C, H, W)`` -> ``(N, 1 + patches, d_model)`` with the class token first."""
        q = self.patch
        n, c, h, w = x.shape
        x = x.reshape(n, c, h // q, q, w // q, q).permute(0, 2, 4, 1, 3, 5)
        x = self.embed(x.reshape(n, (h // q) * (w // q), c * q * q))
        return torch.cat([self.cls.expand(n, -1, -1), x], dim=1) + self.pos

    def featurize(self, x: Tensor) -> Tensor:
        """The class token after the final LayerNorm."""
        t = self.tokens(x)
        for block in self.blocks:
            t = block(t)
        return self.ln_f(t[:, 0])

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.featurize(x))


def layernorm_names(model: nn.Module) -> list[str]:
    """Names of the parameters of every ``nn.LayerNorm`` inside ``model``."""
    return [
        f"{m}.{p}" if m else p
        for m, mod in model.named_modules()
        if isinstance(mod, nn.LayerNorm)
        for p, _ in mod.named_parameters(recurse=False)
    ]


@MODELS.register(
    "vit_tiny",
    ViTTinyParams,
    papers=(118,),
    family="domain-shift",
    tiny={"d_model": 8, "depth": 1, "heads": 2, "mlp_ratio": 1},
)
def vit_tiny(params: ViTTinyParams, info: TaskInfo) -> nn.Module:
    """A small pre-LN Vision Transformer (class token, LayerNorm in every block; GenD, #118)."""
    return ViTTiny(params, info)
