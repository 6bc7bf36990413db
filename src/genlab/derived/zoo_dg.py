"""``zoo_dg``: a zoo of finished runs, probed and combined on this run's source domains.

Chen et al. ("Explore and Exploit the Diverse Knowledge in Model Zoo for Domain Generalization",
ICML 2023, catalogue #48) combine diverse pretrained models, not only the strongest, for unseen
domains. The members are the finished ``runs`` (trained on any task with this task's input shape;
each loaded from the store with its own architecture and frozen) and, with ``include_self``, this
run's model. On this run's multi-domain task, ``genlab.ensembles.zoo.zoo_dg`` fits each member's
linear probe on the pooled training (source) domains, estimates its diversity and correlation
shift across the sources, and combines the members' probabilities with weights fitted by EM on
the source validation splits (``em``), uniformly (``uniform``) or by one probe on all features
(``concat``). On every held-out split ``test/<env>`` the probe reports ``zoo_em``,
``zoo_uniform``, ``zoo_concat``, ``zoo_best`` (the member with the best *source* validation
accuracy: DomainBed's training-domain rule, never the target), ``zoo_gain = zoo_em - zoo_best``
and ``zoo_oracle`` (the member best on that split, for reference); on the split ``model``, per
member ``i`` (in order: this run first when included, then ``runs``) ``weight_i``,
``source_val_i``, ``div_shift_i`` and ``cor_shift_i``, and ``n_used`` (weights >= 0.05). The
members are read from the store the run is trained into; a post-hoc run (``steps = 0``) scores a
zoo without training anything.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator
from torch import nn

from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import Params

RunId = Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]
USED = 0.05


class ZooDGParams(Params):
    """Params of ``zoo_dg``."""

    runs: list[RunId] = Field(default_factory=list, description="finished runs: the zoo")
    include_self: bool = Field(True, description="this run's model is a member too")
    shifts: bool = Field(True, description="estimate each member's diversity/correlation shift")

    @model_validator(mode="after")
    def _some(self) -> ZooDGParams:
        if not self.runs and not self.include_self:
            raise ValueError("the zoo is empty: give runs or include_self = true")
        return self


@PROBES.register(
    "zoo_dg",
    ZooDGParams,
    papers=(48,),
    family="ensembles",
    tiny={"include_self": True, "shifts": False},
)
def zoo_dg(model: nn.Module, ctx: EvalContext, params: ZooDGParams) -> ProbeResult:
    """Held-out-domain accuracy of a source-fitted zoo combination vs its best member (#48)."""
    from genlab.ensembles.zoo import zoo_dg as combine
    from genlab.store_context import active_store
    from genlab.weights.load import load_model, plain_module

    data = ctx.data
    if data.info.kind != "classification" or not data.test or set(data.val) != set(data.train):
        raise SpecError(
            "probe 'zoo_dg' needs a classification task with source domains (a "
            "val split for each train split) and held-out (test) domains"
        )
    members: dict[str, nn.Module] = {}
    if params.include_self:
        store = active_store() if ctx.spec is not None else None
        own = plain_module(model, ctx.spec, data.info, store) if store is not None else model
        members["self"] = own
    if params.runs:
        store = active_store()
        for i, r in enumerate(params.runs):
            members[f"{i}:{r}"] = load_model(store, r)  # a run named twice: two identical members
    dtype = next(model.parameters()).dtype
    try:
        res = combine({k: m.to(dtype) for k, m in members.items()}, data, params.shifts)
    except RuntimeError as exc:
        raise SpecError(
            f"probe 'zoo_dg': a member cannot read this task's inputs "
            f"{data.info.input_shape} ({str(exc).splitlines()[0]})"
        ) from None
    out: ProbeResult = {}
    for name, accs in res.per_split.items():
        split = f"test/{name}"
        out.update({(split, f"zoo_{k}"): v for k, v in accs.items()})
        out[(split, "zoo_gain")] = accs["em"] - accs["best"]
    for i, row in enumerate(res.members.itertuples()):
        out.update(
            {
                ("model", f"weight_{i}"): float(row.weight),
                ("model", f"source_val_{i}"): float(row.source_val),
                ("model", f"div_shift_{i}"): float(row.div_shift),
                ("model", f"cor_shift_{i}"): float(row.cor_shift),
            }
        )
    out[("model", "n_used")] = float((res.members["weight"] >= USED).sum())
    return out
