"""``edge_mlp``: one MLP applied to every row of a dense sequence input, a label per row: the
simplest predicate classifier of scene graph generation in the PredCls setting (Knyazev et al.,
#94), which reads each candidate edge's subject and object classes and its pair feature alone.

A classifier of this kind can learn both the pair feature (the "visual" evidence, which carries
over to new compositions) and the class pair (the frequency bias, which does not).
"""

from __future__ import annotations

from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params


class EdgeMLPParams(Params):
    """Params of ``edge_mlp``."""

    width: int = Field(64, ge=1, le=4096, description="hidden units")
    depth: int = Field(2, ge=1, le=8, description="hidden layers")


@MODELS.register(
    "edge_mlp", EdgeMLPParams, papers=(94,), family="graphs", tiny={"width": 8, "depth": 1}
)
def edge_mlp(params: EdgeMLPParams, info: TaskInfo) -> nn.Module:
    """A shared MLP per row (edge) of a dense sequence input: ``n_outputs`` logits per row (#94)."""
    if info.kind != "sequence" or info.vocab_size is not None or len(info.input_shape) != 2:
        raise ValueError(
            "edge_mlp reads dense rows (batch, rows, features) with a label per row "
            "(a task like relation_graphs)"
        )
    d = info.input_shape[1]
    layers: list[nn.Module] = []
    for _ in range(params.depth):
        layers += [nn.Linear(d, params.width), nn.ReLU()]
        d = params.width
    layers.append(nn.Linear(d, info.n_outputs))
    return RowMLP(nn.Sequential(*layers))


class RowMLP(nn.Module):
    """``net`` on the last dimension of ``(B, T, F)`` inputs."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)
