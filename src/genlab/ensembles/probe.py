"""Linear probes on frozen features: how representation papers score an encoder on a task (UNIC,
Sariyildiz et al., #77, evaluates its student and teachers this way; the model zoo of #48 probes
every member).

``features(model, x)`` are a model's penultimate features (``featurize`` or an MLP's last hidden
layer). ``SoftmaxProbe`` is a multinomial logistic regression on standardised features with an L2
penalty (``l2 / 2 * ||W||^2`` on the mean loss), fitted full-batch by L-BFGS from zero, so it is
deterministic. ``linear_probe`` fits one on a task's training splits and reports accuracy on the
others.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from genlab.data import TaskData
from genlab.methods.dg_shared import featurize


@torch.no_grad()
def features(model: nn.Module, x: Tensor, chunk: int = 4096) -> Tensor:
    """Penultimate features of ``model`` (eval mode) on ``x``, as float64."""
    was = model.training
    model.eval()
    dtype = next(model.parameters()).dtype
    out = torch.cat([featurize(model, x[i : i + chunk].to(dtype)) for i in range(0, len(x), chunk)])
    model.train(was)
    return out.double()


class SoftmaxProbe:
    """``SoftmaxProbe(n_classes, l2).fit(x, y)``; ``proba(x)``; ``predict(x)``."""

    def __init__(self, n_classes: int, l2: float = 1e-3, iters: int = 200) -> None:
        self.k, self.l2, self.iters = n_classes, l2, iters

    def fit(self, x: Tensor, y: Tensor) -> SoftmaxProbe:
        x = x.double()
        self.mean, self.std = x.mean(0), x.std(0).clamp_min(1e-8)
        z = (x - self.mean) / self.std
        self.w = torch.zeros(z.shape[1], self.k, dtype=torch.float64, requires_grad=True)
        self.b = torch.zeros(self.k, dtype=torch.float64, requires_grad=True)
        opt = torch.optim.LBFGS(
            [self.w, self.b],
            max_iter=self.iters,
            tolerance_grad=1e-7,
            line_search_fn="strong_wolfe",
        )

        def closure() -> Tensor:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(z @ self.w + self.b, y)
            loss = loss + 0.5 * self.l2 * self.w.pow(2).sum()
            loss.backward()
            return loss

        with torch.enable_grad():
            opt.step(closure)
        return self

    @torch.no_grad()
    def proba(self, x: Tensor) -> Tensor:
        return torch.softmax(((x.double() - self.mean) / self.std) @ self.w + self.b, dim=1)

    def predict(self, x: Tensor) -> Tensor:
        return self.proba(x).argmax(1)


def linear_probe(model: nn.Module, data: TaskData, l2: float = 1e-3) -> dict[str, float]:
    """Accuracy per split (``val/*``, ``test/*``) of a probe fitted on the features of the pooled
    training splits."""
    xtr = torch.cat([features(model, s.x) for s in data.train.values()])
    ytr = torch.cat([s.y for s in data.train.values()])
    probe = SoftmaxProbe(data.info.n_outputs, l2).fit(xtr, ytr)
    out = {}
    for name, split in data.splits().items():
        if name.startswith("train/") or not len(split):
            continue
        out[name] = (probe.predict(features(model, split.x)) == split.y).double().mean().item()
    return out
