"""Training-regime spec options: learning-rate scaling and the number of updates for a batch size.

Hoffer, Hubara & Soudry ("Train longer, generalize better", NeurIPS 2017, catalogue #9) trace the
large-batch generalization gap to too few updates: a run at batch ``B`` compared with one at
``B0`` should scale its learning rate (they use ``sqrt(B / B0)``; Goyal et al. 2017 ``B / B0``) and,
to close the gap, train for as many updates as the small-batch run rather than as many epochs.

A spec file or overrides may carry a ``regime`` table; it is applied before validation and is not
part of the run spec (the run records the learning rate and steps it produces):

    batch_size = 2048
    steps = 3000                 # the updates of the reference run at base_batch
    [optimizer]
    lr = 0.1                     # the reference run's learning rate
    [regime]
    base_batch = 32              # the reference batch size
    lr_scaling = "sqrt"          # none | sqrt | linear
    updates = "equal_epochs"     # equal_epochs: steps * base_batch / batch_size; equal_updates: steps

``warmup_steps`` is scaled like ``steps``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from genlab.errors import SpecError
from genlab.registry import format_validation_error

LR_POWER = {"none": 0.0, "sqrt": 0.5, "linear": 1.0}


class Regime(BaseModel):
    """The ``regime`` table of a spec."""

    model_config = ConfigDict(extra="forbid")

    base_batch: int = Field(ge=1, description="batch size the spec's lr and steps refer to")
    lr_scaling: Literal["none", "sqrt", "linear"] = "sqrt"
    updates: Literal["equal_epochs", "equal_updates"] = "equal_epochs"


def apply_regime(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with its ``regime`` table (if any) turned into ``optimizer.lr``, ``steps`` and
    ``optimizer.warmup_steps``; raises ``SpecError`` naming the field on bad values."""
    if "regime" not in data:
        return data
    data = dict(data)
    try:
        regime = Regime.model_validate(data.pop("regime"))
    except ValidationError as exc:
        raise SpecError(format_validation_error(exc, Regime, prefix="regime.")) from None
    batch = data.get("batch_size")
    if not isinstance(batch, int) or batch < 1:
        raise SpecError("regime: needs an integer batch_size (full batch has no ratio)")
    steps = data.get("steps")
    if not isinstance(steps, int) or steps < 1:
        raise SpecError("regime: needs an integer steps (the reference run's updates)")
    ratio = batch / regime.base_batch
    optimizer = dict(data.get("optimizer") or {})
    optimizer["lr"] = float(optimizer.get("lr", 1e-3)) * ratio ** LR_POWER[regime.lr_scaling]
    if regime.updates == "equal_epochs":
        data["steps"] = max(1, round(steps / ratio))
        if optimizer.get("warmup_steps"):
            optimizer["warmup_steps"] = max(1, round(optimizer["warmup_steps"] / ratio))
    data["optimizer"] = optimizer
    return data
