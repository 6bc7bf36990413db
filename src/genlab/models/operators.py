"""Fourier neural operators from ``neuraloperator``: the dense ``fno`` and the Tucker-factorised
``tfno`` (Kossaifi et al., "Multi-grid tensorized Fourier neural operator", MG-TFNO, #29).

Both are ``neuralop.models.FNO`` (the library the paper's authors maintain) with ``modes`` Fourier
modes, ``width`` hidden channels and ``layers`` spectral layers, its default lifting, channel MLP,
linear skips and grid positional embedding; ``tfno`` stores each layer's spectral weight
``(width, width, modes//2 + 1)`` as a Tucker tensor holding a share ``rank`` of the dense weight's
parameters (tensorly-torch's ``FactorizedTensor``, the library's ``factorization="tucker"``). A
model maps ``(N, channels, points)`` to ``(N, channels, points)`` at any number of points, so a
model trained at 64 points is evaluated at 128 as it is. They read operator tasks (``burgers_1d``:
``TaskInfo.extra["operator_channels"]``) and refuse any other. ``neuraloperator`` is the
``operators`` extra (``pip install 'genlab[operators]'``), imported when a model is built.
"""

from __future__ import annotations

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.errors import SpecError
from genlab.models import MODELS
from genlab.registry import Params


class FNOParams(Params):
    """Params of ``fno``."""

    modes: int = Field(16, ge=1, le=512, description="Fourier modes kept per spectral layer")
    width: int = Field(32, ge=1, le=512, description="hidden channels")
    layers: int = Field(4, ge=1, le=12, description="spectral layers")


class TFNOParams(FNOParams):
    """Params of ``tfno``."""

    rank: float = Field(
        0.05,
        gt=0,
        le=1,
        description="Tucker rank, as the share of the dense spectral weight's parameters kept",
    )


class Operator(nn.Module):
    """The library's FNO behind two guards: ``to(float dtype)`` keeps the complex spectral
    weights complex (of the matching precision), where ``nn.Module.to`` would drop their imaginary
    part; ``state_dict`` holds tensors only (the library adds its constructor's arguments under
    ``_metadata``, which a ``weights_only`` load refuses)."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)

    def to(self, *args, **kwargs):  # type: ignore[override]
        device, dtype, _, _ = torch._C._nn._parse_to(*args, **kwargs)
        if dtype is None or dtype.is_complex:
            return super().to(*args, **kwargs)

        def convert(t: Tensor) -> Tensor:
            if t.is_complex():
                return t.to(device, dtype.to_complex())
            return t.to(device, dtype) if t.is_floating_point() else t.to(device)

        return self._apply(convert)

    def state_dict(self, *args, **kwargs):  # type: ignore[override]
        out = super().state_dict(*args, **kwargs)
        for key in [k for k, v in out.items() if not isinstance(v, Tensor)]:
            del out[key]
        return out


def build(params: FNOParams, info: TaskInfo, **factorized) -> nn.Module:
    channels = info.extra.get("operator_channels")
    if info.kind != "regression" or not channels:
        raise ValueError(
            "fno/tfno map functions on a grid to functions (an operator task like burgers_1d)"
        )
    try:
        from neuralop.models import FNO
    except ImportError as exc:
        raise SpecError(
            f"model fno/tfno needs neuraloperator: pip install 'genlab[operators]' ({exc})"
        ) from None
    return Operator(
        FNO(
            n_modes=(params.modes,),
            in_channels=channels,
            out_channels=channels,
            hidden_channels=params.width,
            n_layers=params.layers,
            **factorized,
        )
    )


def spectral_parameters(model: nn.Module) -> int:
    """Parameters of the spectral weights (dense or factorised) of an ``fno``/``tfno``."""
    return sum(
        p.numel() for n, p in model.named_parameters() if ".convs." in f".{n}" and "weight" in n
    )


@MODELS.register(
    "fno", FNOParams, papers=(29,), family="operators", tiny={"modes": 4, "width": 8, "layers": 2}
)
def fno(params: FNOParams, info: TaskInfo) -> nn.Module:
    """Fourier neural operator with dense spectral weights (neuraloperator; #29's baseline)."""
    return build(params, info)


@MODELS.register(
    "tfno",
    TFNOParams,
    papers=(29,),
    family="operators",
    tiny={"modes": 4, "width": 8, "layers": 2, "rank": 0.5},
)
def tfno(params: TFNOParams, info: TaskInfo) -> nn.Module:
    """Tucker-factorised FNO: each spectral weight a Tucker tensor of ``rank`` (MG-TFNO, #29)."""
    return build(params, info, factorization="tucker", rank=params.rank)
