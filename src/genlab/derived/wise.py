"""``wise``: WiSE-FT along training — the fine-tuned run interpolated with the run it started from.

Lin et al., "Spurious Feature Diversification Improves Out-of-distribution Generalization" (ICLR
2024, catalogue #16), after Wortsman et al.'s WiSE-FT: ``theta(lam) = (1 - lam) theta_pre + lam
theta_ft``. For a run fine-tuned from another (``model.name = "from_run"``), at each evaluation
the probe interpolates the parent's final weights with the run's current plain weights at ``0``,
each of ``lambdas`` and ``1``, and reports on every split ``wise_acc@<lam>`` (so ``wise_acc@0`` is
the parent and ``wise_acc@1`` the run itself on this run's task) and, for each interior ``lam``,
``fft@<lam>``: the share of examples both ends get wrong and ``theta(lam)`` gets right (the
paper's FalseFalseTrue cases). The path is evaluated on a separate copy of the architecture, so
the run's model, mode and RNG are untouched; the parent is read from the run's store.
"""

from __future__ import annotations

from typing import Annotated, Literal

import torch
from pydantic import Field
from torch import nn

from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import Params

Lam = Annotated[float, Field(gt=0, lt=1)]


class WiseParams(Params):
    """Params of ``wise``."""

    lambdas: list[Lam] = Field(
        default_factory=lambda: [0.5],
        min_length=1,
        description="interior interpolation weights (0 and 1 are added)",
    )
    bn: Literal["interpolate", "recompute"] = Field(
        "interpolate", description="BatchNorm statistics: averaged or re-estimated"
    )


def label(lam: float) -> str:
    return f"{lam:g}"


@PROBES.register("wise", WiseParams, papers=(16,), family="ensembles")
def wise(model: nn.Module, ctx: EvalContext, params: WiseParams) -> ProbeResult:
    """Accuracy along the weight path from the parent run to this one, and FalseFalseTrue (#16)."""
    from genlab.methods import METHODS
    from genlab.store_context import active_store
    from genlab.weights.load import FROM_RUN, build_plain, check_same_shapes, plain_state
    from genlab.weights.path import false_false_true, path_scores

    spec = ctx.spec
    if spec is None or spec.model.name != FROM_RUN:
        raise SpecError(
            "probe 'wise' measures a run fine-tuned from another one (model.name = 'from_run')"
        )
    store, parent = active_store(), spec.model.params["run"]
    cls = METHODS.get(spec.method.name).obj
    now = {k: v.detach().clone() for k, v in model.state_dict().items()}
    now = cls.plain_state(now) if hasattr(cls, "plain_state") else now
    start = plain_state(store, parent)
    check_same_shapes([start, now], [parent, "this run"])
    lambdas = [0.0, *sorted(set(params.lambdas)), 1.0]
    with torch.random.fork_rng():
        net = build_plain(store, spec, ctx.data.info)
        path = path_scores(net, start, now, lambdas, ctx.data, params.bn)
    out: ProbeResult = {
        (r.split, f"wise_acc@{label(r.lam)}"): float(r.accuracy) for r in path.table.itertuples()
    }
    for split, ok in path.correct.items():
        for i, lam in enumerate(lambdas[1:-1], start=1):
            out[(split, f"fft@{label(lam)}")] = false_false_true(ok, i)
    return out
