"""Model ratatouille (Rame et al., "Model Ratatouille: Recycling Diverse Models for OOD
Generalization", ICML 2023, catalogue #102) and its model-soup baseline, as staged run specs.

The official procedure, on the run store:

1. ``pretrain``: the shared "foundation" run;
2. linear probes (``from_run``, ``freeze="features"``, a fresh head): one for the target task,
   one per auxiliary task (LP before FT avoids feature distortion; the target probe's head is
   shared by every target fine-tuning so that they can be averaged);
3. auxiliary fine-tunings: from the foundation with their probe's head, one per auxiliary task;
4. target fine-tunings with the target probe's head: ``soup`` members start from the foundation,
   one per hyper-parameter setting (model soups, Wortsman et al. 2022; DiWA); ``ratatouille``
   members start from each auxiliary fine-tuning (the i-th with the (i mod n)-th setting).

Run ids are spec hashes, so the whole plan is known before anything trains; ``run_plan`` trains it
stage by stage (a stage reads the runs of earlier ones). The final models are uniform averages of
each group (``genlab.weights.path.combination_scores``); ERM is the soup member with the best
in-distribution validation accuracy.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from genlab.spec import RunSpec, parse_spec
from genlab.store import Store

Executor = Callable[[Sequence[RunSpec], Store, bool], None]


@dataclass
class Plan:
    """``stages``: lists of specs trained in order; ``groups``: name -> run ids."""

    stages: list[list[RunSpec]]
    groups: dict[str, list[str]] = field(default_factory=dict)

    def specs(self) -> list[RunSpec]:
        return [s for stage in self.stages for s in stage]


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(base))
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def from_run(template: dict[str, Any], task: dict[str, Any], parent: str, **model: Any) -> RunSpec:
    """``template`` (steps, optimizer, ...) on ``task`` with ``model = from_run(parent, ...)``."""
    return parse_spec(
        {
            **template,
            "task": task,
            "model": {"name": "from_run", "params": {"run": parent, **model}},
        }
    )


def ratatouille_plan(
    pretrain: dict[str, Any],
    aux_tasks: Sequence[dict[str, Any]],
    aux: dict[str, Any],
    target: dict[str, Any],
    hparams: Sequence[dict[str, Any]],
    probe: dict[str, Any],
) -> Plan:
    """The four stages above. ``pretrain`` is a full spec; ``aux``, ``target`` and ``probe`` are
    spec templates without ``model`` (``target`` and ``probe`` name the target task, ``aux`` gets
    each of ``aux_tasks``); ``hparams`` are overrides of ``target``, one per soup member."""
    if not hparams:
        raise ValueError("ratatouille_plan needs at least one hparams setting")
    base = parse_spec(pretrain)
    p = base.run_id
    strip = {k: v for k, v in probe.items() if k != "task"}
    lp_target = from_run(strip, target["task"], p, head="new", freeze="features")
    lp_aux = [from_run(strip, t, p, head="new", freeze="features") for t in aux_tasks]
    aux_runs = [
        from_run(
            {k: v for k, v in aux.items() if k != "task"}, t, p, head="run", head_run=lp.run_id
        )
        for t, lp in zip(aux_tasks, lp_aux, strict=True)
    ]

    def tgt(parent: str, h: dict[str, Any]) -> RunSpec:
        t = _merge(target, h)
        return from_run(
            {k: v for k, v in t.items() if k != "task"},
            t["task"],
            parent,
            head="run",
            head_run=lp_target.run_id,
        )

    soup = [tgt(p, h) for h in hparams]
    rat = [tgt(a.run_id, hparams[i % len(hparams)]) for i, a in enumerate(aux_runs)]
    return Plan(
        stages=[[base], [lp_target, *lp_aux], aux_runs, [*soup, *rat]],
        groups={
            "soup": [s.run_id for s in soup],
            "ratatouille": [s.run_id for s in rat],
            "lp": [lp_target.run_id],
        },
    )


def run_plan(plan: Plan, store: Store, execute: Executor, progress: bool = False) -> None:
    """Train the plan's stages in order with ``execute`` (finished runs are skipped)."""
    for stage in plan.stages:
        execute(stage, store, progress)
