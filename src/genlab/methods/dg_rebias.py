"""ReBias: learn a model statistically independent of an intentionally biased one (Bahng et al.,
"Learning De-biased Representations with Biased Representations", ICML 2020, #90).

The target model F (the run's model) and a biased model G (1x1 convolutions: it sees each pixel's
color, never shape) train together in a minimax game over the kernel dependence of their features:

    F: CE(F) + rebias_lambda   * nHSIC(f, g.detach())
    G: CE(G) - rebias_lambda_g * nHSIC(f.detach(), g)

``nHSIC`` is the normalised HSIC with RBF kernels whose bandwidth is the median pairwise distance
(a biased estimator; the paper uses an unbiased one). ``wrap`` returns a module holding F and G
whose forward is F, so evaluation measures the target model.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.errors import SpecError
from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.methods.dg_shared import Ranges, check_features, classifier, featurize
from genlab.registry import Params


class ReBiasParams(Params):
    """Params of ``rebias`` (paper defaults: lambda = lambda_g = 1)."""

    rebias_lambda: float = Field(1.0, ge=0, description="weight of F's independence penalty")
    rebias_lambda_g: float = Field(1.0, ge=0, description="weight of G's dependence reward")
    g_width: int = Field(32, ge=1, description="channels of the biased 1x1-conv model G")


def rbf_gram(z: Tensor) -> Tensor:
    """RBF Gram matrix with the median pairwise distance as bandwidth."""
    d2 = torch.cdist(z, z).pow(2)
    off = d2[~torch.eye(len(z), dtype=torch.bool)]
    sigma2 = off.detach().median().clamp_min(1e-8) if len(off) else torch.ones((), dtype=z.dtype)
    return torch.exp(-d2 / (2 * sigma2))


def hsic(k: Tensor, l: Tensor) -> Tensor:  # noqa: E741
    """Biased HSIC estimate ``tr(K H L H) / (n - 1)^2`` (Gretton et al., 2005)."""
    n = len(k)
    h = torch.eye(n, dtype=k.dtype) - 1.0 / n
    return torch.trace(k @ h @ l @ h) / (n - 1) ** 2


def nhsic(a: Tensor, b: Tensor) -> Tensor:
    """Normalised HSIC in [0, 1]: ``HSIC(a, b) / sqrt(HSIC(a, a) HSIC(b, b))``."""
    ka, kb = rbf_gram(a), rbf_gram(b)
    return hsic(ka, kb) / (hsic(ka, ka) * hsic(kb, kb)).clamp_min(1e-12).sqrt()


class ColorModel(nn.Module):
    """The biased model G: (1x1 conv, BN, ReLU) twice (per-pixel color only), pool, linear."""

    def __init__(self, c_in: int, width: int, n_out: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(c_in, width, 1),
            nn.BatchNorm2d(width),
            nn.ReLU(),
            nn.Conv2d(width, width, 1),
            nn.BatchNorm2d(width),
            nn.ReLU(),
        )
        self.classifier = nn.Linear(width, n_out)

    def featurize(self, x: Tensor) -> Tensor:
        return self.body(x).mean(dim=(2, 3))

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.featurize(x))


class ReBiasModel(nn.Module):
    """F and G together; the forward (what evaluation sees) is the target model F."""

    def __init__(self, target: nn.Module, biased: ColorModel) -> None:
        super().__init__()
        self.target, self.biased = target, biased
        self.classifier = classifier(target)

    def featurize(self, x: Tensor) -> Tensor:
        return featurize(self.target, x)

    def forward(self, x: Tensor) -> Tensor:
        return self.target(x)


@METHODS.register("rebias", ReBiasParams, papers=(90,), family="domain-generalization")
class ReBias(Method):
    """Minimax HSIC independence between the model and a color-only biased model (#90)."""

    RANGES: ClassVar[Ranges] = {
        "rebias_lambda": ("log10", -1, 1),
        "rebias_lambda_g": ("log10", -1, 1),
    }

    def __init__(self, params: ReBiasParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        if len(info.input_shape) != 3:
            raise ValueError(
                "method 'rebias' needs image inputs (C, H, W) for its 1x1-conv model G"
            )

    def wrap(self, model: nn.Module) -> nn.Module:
        check_features(model)
        if isinstance(model, ReBiasModel):
            raise SpecError("rebias: the model is already wrapped")
        g = ColorModel(self.info.input_shape[0], self.params.g_width, self.info.n_outputs)
        return ReBiasModel(model, g.to(next(model.parameters()).dtype))

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        xs, ys = zip(*batches.values(), strict=True)
        x, y = torch.cat(xs), torch.cat(ys)
        f = model.featurize(x)
        g = model.biased.featurize(x)
        ce_f = cross_entropy(model.classifier(f), y)
        ce_g = cross_entropy(model.biased.classifier(g), y)
        p = self.params
        dep_f, dep_g = nhsic(f, g.detach()), nhsic(f.detach(), g)
        loss = ce_f + p.rebias_lambda * dep_f + ce_g - p.rebias_lambda_g * dep_g
        return loss, {"ce_f": ce_f.item(), "ce_g": ce_g.item(), "hsic": dep_f.item()}
