"""``unic``: multi-teacher distillation into one student (Sariyildiz et al., UNIC, ECCV 2024, #77).

The student (the run's model) learns to reproduce the features of several frozen teachers (finished
runs in the store, on the same inputs): one head per teacher, fed by a *ladder* of expendable
projectors (an MLP ``Linear-GELU-Linear`` on the pooled output of every student block, summed, as
in UNIC's ``LP`` module; without the ladder only the last block's projector), trained with UNIC's
per-teacher loss ``lam_cos * (1 - cos) + lam_sl1 * smooth_l1`` on standardised teacher features.
*Teacher dropping*: for each example the teacher with the highest loss is kept and every other one
dropped with probability ``drop``; the kept losses are normalised by their count (UNIC's
``lowest_loss`` rule). The student's own classifier is a linear probe on its detached features for
the run's task labels, so the usual accuracy probes report a linear-probe accuracy and never shape
the representation. Projectors and heads are dropped from the plain weights (``plain_state``).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch, Method
from genlab.methods.dg_shared import classifier, featurize, pooled
from genlab.models.mlp import MLP
from genlab.registry import Params

RUN_ID = r"^[0-9a-f]{16}$"


class UnicParams(Params):
    """Params of ``unic``."""

    teachers: list[str] = Field(min_length=1, description="run ids of the teachers")
    ladder: bool = Field(True, description="projectors on every block, summed (else last only)")
    drop: float = Field(0.5, ge=0, lt=1, description="teacher-dropping probability")
    lam_cos: float = Field(0.5, ge=0)
    lam_sl1: float = Field(0.5, ge=0)
    hidden: int = Field(128, ge=1, description="projector hidden width")


def layer_features(model: nn.Module, x: Tensor) -> list[Tensor]:
    """Pooled features of each block, shallow to deep: a CNN's ``block_features``, an MLP's hidden
    activations, else the penultimate features alone."""
    if hasattr(model, "block_features"):
        return model.block_features(x)
    if isinstance(model, MLP):
        h, out = model.embed(x).flatten(1), []
        for layer in model.net[:-1]:
            h = layer(h)
            if isinstance(layer, nn.Dropout):
                out.append(h)
        return out
    return [featurize(model, x)]


def teacher_drop_weights(losses: Tensor, drop: float) -> Tensor:
    """``(T, N)`` coefficients: per example keep the highest-loss teacher, drop each other with
    probability ``drop``; normalised to sum to one over the batch (UNIC)."""
    keep = (torch.rand(losses.shape, device=losses.device) >= drop).to(losses.dtype)
    keep[losses.argmax(dim=0), torch.arange(losses.shape[1])] = 1.0
    return keep / keep.sum()


class Student(nn.Module):
    """The student model, per-teacher ladders of projectors, and teacher-feature standardisers."""

    def __init__(self, model: nn.Module, dims_in: list[int], dims_out: list[int], p: UnicParams):
        super().__init__()
        self.model = model
        blocks = range(len(dims_in)) if p.ladder else [len(dims_in) - 1]
        self.blocks = list(blocks)
        self.heads = nn.ModuleList(
            nn.ModuleList(
                nn.Sequential(nn.Linear(dims_in[b], p.hidden), nn.GELU(), nn.Linear(p.hidden, d))
                for b in self.blocks
            )
            for d in dims_out
        )
        self.norms = nn.ModuleList(nn.BatchNorm1d(d, affine=False) for d in dims_out)

    def forward(self, x: Tensor) -> Tensor:
        return self.model(x)

    def predict(self, feats: list[Tensor]) -> list[Tensor]:
        """Each teacher's predicted features: the sum of its projectors over the ladder."""
        return [
            sum(proj(feats[b]) for proj, b in zip(head, self.blocks, strict=True))
            for head in self.heads
        ]


def _tiny(root: object) -> dict[str, Any]:
    """A two-step tiny CNN on ``colored_digits`` as the teacher (``derived.runs``)."""
    from genlab.derived.runs import tiny_parent

    return {"teachers": [tiny_parent("colored_digits", "cnn")], "hidden": 8}


@METHODS.register("unic", UnicParams, papers=(77,), family="ensembles", tiny=_tiny)
class Unic(Method):
    """Distil several teachers' features into the student, with a ladder and teacher dropping."""

    def __init__(self, params: UnicParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        from genlab.store_context import active_store
        from genlab.weights.load import load_model

        store = active_store()
        self.teachers = [load_model(store, t) for t in params.teachers]
        for t in self.teachers:
            classifier(t)  # raises if a teacher has no features
            t.requires_grad_(False)

    def wrap(self, model: nn.Module) -> nn.Module:
        classifier(model)
        if self.info.vocab_size is not None:
            raise ValueError(
                "method.name: unic distils pooled features of dense inputs; this task "
                "gives tokens (use a task with input_shape, e.g. digits)"
            )
        dtype = next(model.parameters()).dtype
        probe = torch.zeros(2, *self.info.input_shape, dtype=dtype)
        was = model.training
        model.eval()
        with torch.no_grad():
            dims_in = [f.shape[1] for f in layer_features(model, probe)]
            try:
                dims_out = [featurize(t.to(dtype), probe).shape[1] for t in self.teachers]
            except RuntimeError as exc:
                raise ValueError(
                    f"method.params.teachers: a teacher does not read this task's "
                    f"inputs {tuple(self.info.input_shape)}: {exc}"
                ) from None
        model.train(was)
        return Student(model, dims_in, dims_out, self.params).to(dtype)  # type: ignore[arg-type]

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        p: UnicParams = self.params  # type: ignore[assignment]
        x, y, _ = pooled(batches)
        feats = layer_features(model.model, x)
        with torch.no_grad():
            targets = [featurize(t.eval(), x) for t in self.teachers]
        targets = [norm(t) for norm, t in zip(model.norms, targets, strict=True)]
        preds = model.predict(feats)
        per = torch.stack(
            [
                p.lam_cos * (1 - F.cosine_similarity(s, t, dim=1))
                + p.lam_sl1 * F.smooth_l1_loss(s, t, reduction="none").mean(dim=1)
                for s, t in zip(preds, targets, strict=True)
            ]
        )
        coeff = teacher_drop_weights(per.detach(), p.drop)
        distill = (coeff * per).sum()
        head = classifier(model.model)
        probe = cross_entropy(head(feats[-1].detach() if len(feats) else x), y)
        logs = {f"distill_t{i}": v.mean().item() for i, v in enumerate(per)}
        return distill + probe, {"distill": distill.item(), **logs}

    @staticmethod
    def plain_state(state: dict[str, Tensor]) -> dict[str, Tensor]:
        """The student model alone (projectors and standardisers dropped)."""
        return {k[6:]: v for k, v in state.items() if k.startswith("model.")}
