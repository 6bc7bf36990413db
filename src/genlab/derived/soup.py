"""``soup``: a model whose weights are the weighted average of finished runs' weights.

A uniform average of fine-tunings that share an initialisation is a *model soup* (Wortsman et al.
2022) and, when the fine-tunings start from auxiliary-task models, *model ratatouille* (Rame et
al., #102); two runs with weights ``(1 - lam, lam)`` give WiSE-FT's ``theta(lam)`` (Lin et al.,
#16). Trained for ``steps = 0`` it is a *post-hoc run*: the engine evaluates the averaged model
once, so its accuracies reach the store like any run's. The runs must share an initialisation
(``genlab.weights.load.check_shared_init``; ``allow_unrelated`` skips the check) and one
architecture, the first run's. BatchNorm statistics are averaged like the weights.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator
from torch import nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params

RunId = Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]


class SoupParams(Params):
    """Params of ``soup``."""

    runs: list[RunId] = Field(min_length=1, description="finished runs whose weights are averaged")
    weights: list[float] | None = Field(
        None, description="one non-negative weight per run; default uniform"
    )
    allow_unrelated: bool = Field(False, description="skip the shared-initialisation check")

    @model_validator(mode="after")
    def _weights(self) -> SoupParams:
        w = self.weights
        if w is not None and (len(w) != len(self.runs) or min(w) < 0 or sum(w) <= 0):
            raise ValueError("weights must be one non-negative number per run, not all zero")
        return self


def _tiny(root: object) -> dict[str, list[str]]:
    """Two tiny CNN runs on ``colored_digits`` from the same seed (``derived.runs``)."""
    from genlab.derived.runs import tiny_parent

    return {"runs": [tiny_parent("colored_digits", "cnn"), tiny_parent("colored_digits", "cnn", 3)]}


@MODELS.register("soup", SoupParams, papers=(16, 102), family="ensembles", tiny=_tiny)
def soup(params: SoupParams, info: TaskInfo) -> nn.Module:
    """The weighted average of finished runs' plain weights (#102, #16)."""
    from genlab.store_context import active_store
    from genlab.weights.load import (
        build_plain,
        check_same_shapes,
        check_shared_init,
        finished_spec,
        load_into,
        plain_state,
    )
    from genlab.weights.ops import average

    store = active_store()
    if len(params.runs) > 1 and not params.allow_unrelated:
        check_shared_init(store, params.runs)
    states = [plain_state(store, r) for r in params.runs]
    check_same_shapes(states, params.runs)
    model = build_plain(store, finished_spec(store, params.runs[0]), info)
    return load_into(model, average(states, params.weights), f"the soup of {params.runs}")
