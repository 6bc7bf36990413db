"""``seq2point``: a 1D convolutional network from a window of aggregate power to one appliance's
power at its midpoint (Zhang et al. 2018, the NILM model SIDED + AMDA, #36, trains), small:
three convolutions, a hidden dense layer and a linear output (about 20k parameters at the
defaults on 99-point windows)."""

from __future__ import annotations

from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params


class Seq2PointParams(Params):
    """Params of ``seq2point``."""

    channels: int = Field(16, ge=1, le=256, description="filters of each convolution")
    hidden: int = Field(32, ge=1, le=4096, description="units of the dense layer")


class Seq2Point(nn.Module):
    """``conv(9) -> conv(7) -> conv(5)`` (ReLU, stride 2) -> dense(hidden) -> linear."""

    def __init__(self, p: Seq2PointParams, width: int) -> None:
        super().__init__()
        c = p.channels
        self.convs = nn.Sequential(
            nn.Conv1d(1, c, 9, stride=2, padding=4),
            nn.ReLU(),
            nn.Conv1d(c, c, 7, stride=2, padding=3),
            nn.ReLU(),
            nn.Conv1d(c, c, 5, stride=2, padding=2),
            nn.ReLU(),
        )
        n = width
        for _ in range(3):
            n = (n + 1) // 2
        self.head = nn.Sequential(
            nn.Flatten(), nn.Linear(c * n, p.hidden), nn.ReLU(), nn.Linear(p.hidden, 1)
        )

    def forward(self, x: Tensor) -> Tensor:
        return self.head(self.convs(x))


@MODELS.register(
    "seq2point", Seq2PointParams, papers=(36,), family="nilm", tiny={"channels": 4, "hidden": 8}
)
def seq2point(params: Seq2PointParams, info: TaskInfo) -> nn.Module:
    """Seq2point 1D CNN for load disaggregation (#36)."""
    width = info.extra.get("seq2point")
    if info.kind != "regression" or not width:
        raise ValueError("seq2point reads windows of aggregate power (a task like industrial_load)")
    return Seq2Point(params, width)
