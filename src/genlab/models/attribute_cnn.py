"""A small CNN that predicts several attributes of an image at once (one head per attribute).

For the shape x colour task of Uselis et al. (#59): conv blocks, global average pooling into an
embedding (``featurize``, read by the factorisation probe), then a linear read-out to
``(N, n_attributes, n_outputs)`` logits, so the task's per-row accuracy is "every attribute right".
"""

from __future__ import annotations

from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params


class AttributeCNNParams(Params):
    """Params of ``attribute_cnn``."""

    channels: list[int] = Field(default_factory=lambda: [32, 64], min_length=1)
    embed_dim: int = Field(64, ge=1, description="size of the pooled embedding")


class AttributeCNN(nn.Module):
    """``[conv3x3 -> ReLU -> maxpool] * blocks -> mean pool -> linear embed -> ReLU -> heads``."""

    def __init__(self, p: AttributeCNNParams, info: TaskInfo) -> None:
        super().__init__()
        attributes = info.extra.get("attributes")
        if len(info.input_shape) != 3 or not attributes:
            raise ValueError("attribute_cnn needs (C, H, W) images with info.extra['attributes']")
        layers: list[nn.Module] = []
        c_in = info.input_shape[0]
        for c in p.channels:
            layers += [nn.Conv2d(c_in, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
            c_in = c
        self.trunk = nn.Sequential(*layers)
        self.embed = nn.Sequential(nn.Linear(c_in, p.embed_dim), nn.ReLU())
        self.n_attr, self.n_out = len(attributes), info.n_outputs
        self.heads = nn.Linear(p.embed_dim, self.n_attr * self.n_out)

    def featurize(self, x: Tensor) -> Tensor:
        """The penultimate embedding ``(N, embed_dim)``."""
        return self.embed(self.trunk(x).mean(dim=(2, 3)))

    def forward(self, x: Tensor) -> Tensor:
        return self.heads(self.featurize(x)).view(-1, self.n_attr, self.n_out)


@MODELS.register(
    "attribute_cnn",
    AttributeCNNParams,
    papers=(59,),
    family="compositional",
    tiny={"channels": [8, 16], "embed_dim": 16},
)
def attribute_cnn(params: AttributeCNNParams, info: TaskInfo) -> nn.Module:
    """Small CNN with one read-out head per image attribute (Uselis et al., #59)."""
    return AttributeCNN(params, info)
