"""``frozen_features``: a linear classifier on the concatenated frozen features of finished runs.

Chen et al., "Explore and Exploit the Diverse Knowledge in Model Zoo for Domain Generalization"
(ICML 2023, catalogue #48), after ZooD (Dong et al. 2022), combine the encoders of a model zoo by
training one classifier on their joined features; with a single run it is that run's linear probe.
Each member (a finished run, read from the store this run trains into) is kept frozen, in eval
mode; its penultimate features (``featurize``) are concatenated, standardised by a BatchNorm
without affine parameters (its statistics estimated on the training data), and fed to a fresh
linear layer drawn from the run's seed, the only trained parameters.
"""

from __future__ import annotations

from typing import Annotated

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params

RunId = Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]


class FrozenFeaturesParams(Params):
    """Params of ``frozen_features``."""

    runs: list[RunId] = Field(min_length=1, description="finished runs whose features are joined")


class FrozenFeatures(nn.Module):
    """Frozen members, a feature standardiser and a linear ``classifier``."""

    def __init__(self, members: list[nn.Module], dim: int, n_outputs: int) -> None:
        super().__init__()
        self.members = nn.ModuleList(members).requires_grad_(False)
        self.norm = nn.BatchNorm1d(dim, affine=False)
        self.classifier = nn.Linear(dim, n_outputs)

    def train(self, mode: bool = True) -> FrozenFeatures:
        super().train(mode)
        self.members.eval()  # frozen: no dropout, no BatchNorm statistics moving
        return self

    def featurize(self, x: Tensor) -> Tensor:
        from genlab.methods.dg_shared import featurize

        with torch.no_grad():
            feats = torch.cat([featurize(m, x) for m in self.members], dim=1)
        return self.norm(feats)

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.featurize(x))


def _tiny(root: object) -> dict[str, list[str]]:
    """A tiny CNN and a tiny MLP on ``colored_digits`` as the members (``derived.runs``)."""
    from genlab.derived.runs import tiny_parent

    return {"runs": [tiny_parent("colored_digits", "cnn"), tiny_parent("colored_digits", "mlp")]}


@MODELS.register(
    "frozen_features", FrozenFeaturesParams, papers=(48,), family="ensembles", tiny=_tiny
)
def frozen_features(params: FrozenFeaturesParams, info: TaskInfo) -> nn.Module:
    """A linear classifier on the joined frozen features of finished runs (Chen et al., #48)."""
    from genlab.methods.dg_shared import featurize
    from genlab.store_context import active_store
    from genlab.weights.load import load_model

    store = active_store()
    members = [load_model(store, r) for r in params.runs]  # each on its own task's outputs
    probe = torch.zeros(2, *info.input_shape, dtype=next(members[0].parameters()).dtype)
    try:
        with torch.no_grad():
            dim = sum(featurize(m.eval(), probe).shape[1] for m in members)
    except RuntimeError as exc:
        raise ValueError(
            f"model.params.runs: a member does not read this task's inputs: {exc}"
        ) from None
    return FrozenFeatures(members, dim, info.n_outputs)
