"""``task_probes``: linear-probe accuracy of the run's frozen features on other tasks.

How representation papers score an encoder: UNIC (Sariyildiz et al., ECCV 2024, catalogue #77)
reports, for its multi-teacher student and for each teacher, the accuracy of a linear classifier
trained on frozen features for every teacher's task. For each named task (built with this run's
``data_seed``; it must read the same inputs), a multinomial logistic regression with an L2 penalty
is fitted by L-BFGS on the penultimate features of its training splits
(``genlab.ensembles.probe.linear_probe``, deterministic) and scored on its test splits:
``(test/<split>, probe_<name>)``. The run's model is only read (features in eval mode).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator
from torch import nn

from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import Params


class TaskProbesParams(Params):
    """Params of ``task_probes``."""

    tasks: dict[str, dict[str, Any]] = Field(
        min_length=1, description="name -> task table {name = ..., params = {...}}"
    )
    l2: float = Field(1e-3, ge=0, description="L2 penalty of each probe")

    @field_validator("tasks")
    @classmethod
    def _tasks(cls, v: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        from genlab.tasks import TASKS

        out = {}
        for key, t in v.items():
            if set(t) - {"name", "params"} or "name" not in t:
                raise ValueError(f"tasks.{key} must be a table {{name = ..., params = {{...}}}}")
            p = TASKS.params(t["name"], t.get("params", {}), f"eval.probes.params.tasks.{key}")
            out[key] = {"name": t["name"], "params": p.model_dump(mode="json")}
        return out


def _tiny_tasks() -> dict[str, Any]:
    return {"tasks": {"parity": {"name": "digits_views", "params": {"label": "parity"}}}}


@PROBES.register(
    "task_probes", TaskProbesParams, papers=(77,), family="ensembles", tiny=_tiny_tasks()
)
def task_probes(model: nn.Module, ctx: EvalContext, params: TaskProbesParams) -> ProbeResult:
    """Linear-probe accuracy of the frozen features on each named task (UNIC, #77)."""
    from genlab.ensembles.probe import linear_probe
    from genlab.store_context import active_store
    from genlab.tasks import TASKS
    from genlab.weights.load import plain_module

    seed = ctx.spec.data_seed if ctx.spec is not None else 0
    if ctx.spec is not None:
        model = plain_module(model, ctx.spec, ctx.data.info, active_store())
    out: ProbeResult = {}
    for key, t in params.tasks.items():
        entry = TASKS.get(t["name"])
        data = entry.obj(entry.params.model_validate(t["params"]), seed)
        if tuple(data.info.input_shape or ()) != tuple(ctx.data.info.input_shape or ()):
            raise SpecError(
                f"probe 'task_probes': task {key} has inputs {data.info.input_shape}, "
                f"the run's task {ctx.data.info.input_shape}"
            )
        dtype = next(model.parameters()).dtype
        for split, acc in linear_probe(model, data.to(dtype), params.l2).items():
            if split.startswith("test/"):
                out[(split, f"probe_{key}")] = acc
    return out
