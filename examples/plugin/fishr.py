"""A user's own domain-generalization penalty, registered from outside genlab: Fishr.

Fishr (Rame, Dancette & Cord, "Fishr: Invariant Gradient Variances for Out-of-Distribution
Generalization", ICML 2022) matches, across training environments, the variance over samples of the
per-sample gradients of the loss with respect to the classifier (the last linear layer):

    loss = mean CE + lambda * mean_e || Var_e[grad] - mean_e' Var_e'[grad] ||^2

The per-sample gradients of cross-entropy w.r.t. a linear layer have a closed form,
``(softmax(z) - onehot(y)) outer features``, so no extra backward pass is needed. As in DomainBed's
Fishr the penalty weight is 1 for ``anneal_iters`` updates and ``lambda_`` after, when Adam's state is
reset; unlike it, no moving average of the variances is kept (a simplification of this example).

This file uses only genlab's public decorators and base classes; load it with
``imports = ["./fishr.py"]`` in a spec or sweep, or ``genlab --import examples/plugin/fishr.py ...``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from pydantic import Field
from torch import Tensor, nn

from genlab.losses import cross_entropy
from genlab.methods import METHODS, Method
from genlab.registry import Params


class FishrParams(Params):
    lambda_: float = Field(1000.0, ge=0, description="penalty weight after annealing")
    anneal_iters: int = Field(100, ge=0, description="updates with penalty weight 1")


def last_linear(model: nn.Module) -> nn.Linear:
    """The classifier: the model's last ``nn.Linear``."""
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    if not linears:
        raise ValueError("fishr needs a model whose last layer is nn.Linear")
    return linears[-1]


def gradient_variances(feats: Tensor, logits: Tensor, y: Tensor, sizes: list[int]) -> Tensor:
    """Per environment, the variance over its samples of each per-sample gradient coordinate of
    the cross-entropy w.r.t. the classifier's weight and bias: ``(n_envs, C * (D + 1))``."""
    dz = logits.softmax(-1) - F.one_hot(y, logits.shape[-1]).to(logits.dtype)
    grads = torch.cat([(dz[:, :, None] * feats[:, None, :]).flatten(1), dz], dim=1)
    return torch.stack([g.var(dim=0, unbiased=False) for g in grads.split(sizes)])


@METHODS.register("fishr", FishrParams, family="domain-generalization")
class Fishr(Method):
    """Fishr: match per-environment variances of classifier gradients (Rame et al., 2022)."""

    def __init__(self, params: FishrParams, info) -> None:
        super().__init__(params, info)
        if len(info.extra.get("train_envs", [])) < 2:
            raise ValueError("fishr needs at least two training environments")

    def wrap(self, model: nn.Module) -> nn.Module:
        model.register_buffer("fishr_updates", torch.zeros((), dtype=torch.long))
        return model

    def loss(self, model: nn.Module, batches) -> tuple[Tensor, dict[str, float]]:
        xs, ys = zip(*batches.values(), strict=True)
        feats: list[Tensor] = []
        hook = last_linear(model).register_forward_hook(lambda m, inp, out: feats.append(inp[0]))
        try:
            logits = model(torch.cat(xs))
        finally:
            hook.remove()
        y = torch.cat(ys)
        var = gradient_variances(feats[0].flatten(1), logits, y, [len(t) for t in ys])
        penalty = (var - var.mean(dim=0)).pow(2).sum(dim=1).mean()
        nll = cross_entropy(logits, y)
        weight = (
            self.params.lambda_ if int(model.fishr_updates) >= self.params.anneal_iters else 1.0
        )
        loss = nll + weight * penalty
        return loss, {"nll": nll.item(), "penalty": penalty.item()}

    def step(self, model: nn.Module, optimizer, batches) -> dict[str, float]:
        if int(model.fishr_updates) == self.params.anneal_iters:
            optimizer.state.clear()  # the loss scale changes: start Adam afresh, as DomainBed does
        logs = super().step(model, optimizer, batches)
        model.fishr_updates += 1
        return logs
