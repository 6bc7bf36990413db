"""Your components in a claim: ``genlab claims run ID --set methods=[erm,my_penalty]`` (or
``models=[...]``) puts registered methods or models, plugins included, on the axis of the claim's
arms that compares them, and judges them with the claim's own judge.

The claim is not edited: ``with_components`` returns an instance of a subclass of the claim's
class whose configuration holds the user's names (so its verdict is stored under a configuration
id of its own, never the recorded design's) and whose ``arms`` rewrite the axis (``component_axes``
finds it: the arms' label ``method``, ``algorithm`` or ``optimiser``, or ``model`` or ``arch``,
whose values each run one method, or one model). Two ways to place the names:

* **own labels** — one arm per name, labelled by it (a name the claim already has keeps that arm
  as declared; a new one starts from the claim's ERM arm, else its first, with the component's
  default params). Used when the judge reads the arms whatever they are called (e.g. the spread of
  held-out accuracy over algorithms): a dry run of the judge on a placeholder table must give
  finite intervals.
* **in place** — when the judge reads the claim's arms by name (``my_method - ERM``): as many
  names as the axis has values; a name the claim already has keeps its place, the others take the
  remaining places in order, and the judge sees the claim's labels. The evidence says which name
  stood in for which, and the figure shows the user's names.

The claim's controls run with the same substitution (where their arms have the axis), so what they
measured licenses the user's design, not the recorded one. Nothing here changes a claim's recorded
design: ``claims.lock`` and the registered claim are untouched.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from genlab.errors import SpecError

if TYPE_CHECKING:
    import pandas as pd

    from genlab.claims.base import Claim
    from genlab.design import Arm
    from genlab.registry import Params

KINDS = {"methods": "method", "models": "model"}  # the --set key and the spec field it fills
KINDS_BY_FIELD = {v: k for k, v in KINDS.items()}
REFERENCE = {"method": "erm"}  # where a new method's arms start from, when the axis has it
# the labels by which claims name an axis that compares components (``ArmBars(by="method")``);
# an axis labelled otherwise (``arm``: the steps of a pipeline, ``shift``) is not a comparison
LABELS = {"methods": ("method", "algorithm", "optimiser"), "models": ("model", "arch")}


@dataclass(frozen=True)
class ComponentAxis:
    """One axis of a claim's arms that compares components: the ``--set`` key (``methods``), the
    spec field (``method``), the label column (``algorithm``), its values in order and the
    component each value runs."""

    key: str
    field: str
    label: str
    values: tuple[Any, ...]
    names: tuple[str, ...]

    def text(self) -> str:
        pairs = [
            str(v) if str(v) == n else f"{v} ({n})"
            for v, n in zip(self.values, self.names, strict=True)
        ]
        return f"{self.key}=[...] on its {self.label!r} axis: {', '.join(pairs)}"


def _name(spec: Any, field: str) -> str | None:
    comp = getattr(spec, field, None)
    name = getattr(comp, "name", None)
    return name if isinstance(name, str) else None


def component_axes(
    arms: list[Arm], replicates: tuple[str, ...] = ("seed", "data_seed")
) -> dict[str, ComponentAxis]:
    """Per ``--set`` key, the axis of ``arms`` (a label of ``LABELS``) whose values each run one
    component of that kind, two or more in all, on every arm."""
    out: dict[str, ComponentAxis] = {}
    present = {k for a in arms for k in a.labels if k not in replicates}
    for key, field in KINDS.items():
        for label in (lab for lab in LABELS[key] if lab in present):
            seen: dict[Any, set[str | None]] = {}
            for a in arms:
                if label in a.labels:
                    seen.setdefault(a.labels[label], set()).add(_name(a.spec, field))
            names = [next(iter(s)) for s in seen.values() if len(s) == 1]
            if (
                len(names) == len(seen)
                and None not in names
                and len(set(names)) >= 2
                and all(label in a.labels for a in arms)
            ):
                out[key] = ComponentAxis(key, field, label, tuple(seen), tuple(names))  # type: ignore[arg-type]
                break
    return out


def _entries(key: str, value: Any) -> list[dict[str, Any]]:
    """The user's components as ``{"name", "params"}``, each name checked against its registry."""
    from genlab.methods import METHODS
    from genlab.models import MODELS
    from genlab.sweep.multirun import parse_list

    registry = {"methods": METHODS, "models": MODELS}[key]
    value = parse_list(value)  # [erm,my_penalty]: bare names, which TOML does not read
    items = value if isinstance(value, list) else None
    if not items:
        raise SpecError(
            f"claim.{key}: give a non-empty list of {KINDS[key]} names, e.g. "
            f"{key}=[erm,my_{KINDS[key]}] (got {value!r})"
        )
    out = []
    for i, item in enumerate(items):
        comp = {"name": item, "params": {}} if isinstance(item, str) else item
        if (
            not isinstance(comp, dict)
            or not isinstance(comp.get("name"), str)
            or set(comp) - {"name", "params"}
        ):
            raise SpecError(
                f"claim.{key}[{i}]: a {KINDS[key]} name or a table "
                f"{{name = ..., params = {{...}}}} (got {item!r})"
            )
        try:
            registry.get(comp["name"])
        except SpecError as exc:
            raise SpecError(f"claim.{key}[{i}]: {exc}") from None
        out.append({"name": comp["name"], "params": dict(comp.get("params") or {})})
    names = [c["name"] for c in out]
    if len(set(names)) != len(names):
        raise SpecError(f"claim.{key}: each {KINDS[key]} once (got {', '.join(names)})")
    return out


def _swap(arm: Arm, field: str, comp: dict[str, Any], label: str, value: Any) -> Arm:
    """``arm`` running ``comp`` as its ``field`` (its default params unless given), labelled
    ``value`` on ``label``."""
    from genlab.design import Arm
    from genlab.spec import parse_spec
    from genlab.sweep.multirun import one_line

    data = json.loads(arm.spec.canonical_json())
    data[field] = {"name": comp["name"], "params": comp["params"]}
    try:
        spec = parse_spec(data)
    except SpecError as exc:
        raise SpecError(
            f"claim.{KINDS_BY_FIELD[field]}: {comp['name']}: {one_line(str(exc))}"
        ) from None
    return Arm({**arm.labels, label: value}, spec)


@dataclass
class Plan:
    """How one config's arms take the user's components: the arms, and for ``in place`` which
    user name stands in for which claim label."""

    arms: list[Arm]
    stands_in: dict[Any, str]  # claim label -> user name (in place only)
    axis: ComponentAxis | None


def placeholder_table(claim: Claim, arms: list[Arm]) -> pd.DataFrame:
    """The per-run table of ``arms`` with every measure a fixed pseudo-random value in [0.55,
    0.95]: what a dry run of the judge reads."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    table = pd.DataFrame([a.labels for a in arms])
    table["run_id"], table["status"] = [a.spec.run_id for a in arms], "done"
    for m in claim.measures:
        table[m] = rng.uniform(0.55, 0.95, len(arms))
    return table


def judge_reads(claim: Claim, cfg: Params, arms: list[Arm]) -> bool:
    """Whether the claim's judge draws its numbers from ``arms``: a dry run on a placeholder table
    raises nothing and gives finite intervals (or finite statistics, for a judge without any)."""
    try:
        d = claim.decide(cfg, placeholder_table(claim, arms))
    except Exception:  # noqa: BLE001 - any failure means the judge does not read these labels
        return False
    values = [v for iv in d.intervals for v in (iv.estimate, iv.lo, iv.hi)]
    values = values or [v for v in d.stats.values() if isinstance(v, int | float)]
    return bool(values) and all(math.isfinite(float(v)) for v in values)


def plan(claim: Claim, cfg: Params, arms: list[Arm], key: str, comps: list[dict[str, Any]]) -> Plan:
    """Place ``comps`` on the ``key`` axis of ``arms`` (the module docstring's two ways)."""
    axis = component_axes(arms, claim.replicates).get(key)
    if axis is None:
        return Plan(arms, {}, None)
    group = {v: [a for a in arms if a.labels[axis.label] == v] for v in axis.values}
    by_name = dict(zip(axis.names, axis.values, strict=True))
    ref = by_name.get(REFERENCE.get(axis.field, ""), axis.values[0])
    own: list[Arm] = []
    for c in comps:
        if c["name"] in group and not c["params"]:
            own += group[c["name"]]
        else:
            own += [_swap(a, axis.field, c, axis.label, c["name"]) for a in group[ref]]
    if judge_reads(claim, cfg, own):
        return Plan(own, {}, axis)
    if len(comps) != len(axis.values):
        raise SpecError(
            f"claim.{key}: {claim.id} judges its {axis.label!r} arms by name "
            f"({', '.join(map(str, axis.values))}): give {len(axis.values)} {key}; a name it "
            f"has keeps its place, the others stand in for the rest in order (got "
            f"{len(comps)}: {', '.join(c['name'] for c in comps)})"
        )
    kept = {c["name"] for c in comps if c["name"] in group and not c["params"]}
    free = [v for v in axis.values if v not in kept]
    others = [c for c in comps if not (c["name"] in group and not c["params"])]
    place = dict(zip(free, others, strict=True))
    out: list[Arm] = []
    for v in axis.values:
        c = place.get(v)
        out += group[v] if c is None else [_swap(a, axis.field, c, axis.label, v) for a in group[v]]
    return Plan(out, {v: c["name"] for v, c in place.items()}, axis)


def with_components(claim: Claim, components: dict[str, Any], budget: str = "smoke") -> Claim:
    """``claim`` with the user's ``components`` (``{"methods": [...]}`` and/or ``{"models":
    [...]}``; names, ``{"name", "params"}`` tables, or ``"[a,b]"`` as typed) on its arms; a
    ``SpecError`` (exit 2, nothing run) for an unknown name, a claim without such an axis at
    ``budget``, or a list its judge cannot read. Its ``components`` hold the lists as read (the
    overrides its verdict is recorded with)."""
    from pydantic import create_model

    unknown = sorted(set(components) - set(KINDS))
    if unknown:
        raise SpecError(f"claim.{unknown[0]}: not a component key; allowed: {', '.join(KINDS)}")
    comps = {k: _entries(k, v) for k, v in components.items()}
    components = {k: [c["name"] if not c["params"] else c for c in v] for k, v in comps.items()}
    base_cls, base_config = type(claim), claim.Config
    fields: dict[str, Any] = {k: (list[Any] | None, None) for k in KINDS}
    config_cls = create_model(
        f"{base_config.__name__}WithComponents", __base__=base_config, **fields
    )
    cache: dict[str, Plan] = {}

    def own(cfg: Params) -> Params:
        return base_config.model_validate(cfg.model_dump(exclude=set(KINDS)))

    def planned(cfg: Params) -> Plan:
        base = own(cfg)
        token = json.dumps(base.model_dump(mode="json"), sort_keys=True, default=str)
        if token not in cache:
            arms, stands_in, axis = base_cls.arms(user, base), {}, None
            for key, cs in comps.items():
                p = plan(user, base, arms, key, cs)
                arms, stands_in, axis = p.arms, {**stands_in, **p.stands_in}, p.axis or axis
            cache[token] = Plan(arms, stands_in, axis)
        return cache[token]

    def config(self, budget="smoke", overrides=None, control=None):  # type: ignore[no-untyped-def]
        return base_cls.config(self, budget, {**components, **(overrides or {})}, control)

    def arms(self, cfg):  # type: ignore[no-untyped-def]
        return planned(cfg).arms

    def decide(self, cfg, table):  # type: ignore[no-untyped-def]
        return base_cls.decide(self, own(cfg), table)

    def evaluate(self, cfg, table):  # type: ignore[no-untyped-def]
        result = base_cls.evaluate(self, cfg, table)
        result.evidence = f"{design_note(components, planned(cfg))} {result.evidence}"
        return result

    def draw(self, cfg, result, metrics, path):  # type: ignore[no-untyped-def]
        p = planned(cfg)
        if p.stands_in and p.axis is not None and p.axis.label in result.runs:
            import copy

            result = copy.copy(result)
            result.runs = result.runs.assign(
                **{p.axis.label: result.runs[p.axis.label].map(lambda v: p.stands_in.get(v, v))}
            )
        return base_cls.draw(self, cfg, result, metrics, path)

    namespace = {
        "Config": config_cls,
        "components": components,
        "config": config,
        "arms": arms,
        "decide": decide,
        "evaluate": evaluate,
        "draw": draw,
        "__module__": __name__,
        "__doc__": f"{base_cls.__name__} with the user's {', '.join(comps)}",
    }
    user = type(f"{base_cls.__name__}WithComponents", (base_cls,), namespace)()
    cfg = user.config(budget)  # type: ignore[arg-type]
    axes = component_axes(base_cls.arms(user, own(cfg)), claim.replicates)
    for key in comps:
        if key not in axes:
            raise SpecError(
                f"claim.{key}: {claim.id} compares no {key} (no axis of its arms "
                f"changes the {KINDS[key]}); `genlab claims show ID` names a claim's "
                "axes that take methods= or models="
            )
    planned(cfg)  # a list the judge cannot read fails here, before anything runs
    for name, c in claim.applicable_controls(budget).items():  # type: ignore[arg-type]
        planned(user.config(c.budget, control=name))
    return user


def design_note(components: dict[str, Any], p: Plan) -> str:
    """``User design (not the recorded one): methods=[erm, my_penalty]; my_penalty in place of
    rationale_invariance.``"""
    given = "; ".join(
        f"{k}=[{', '.join(c if isinstance(c, str) else c['name'] for c in v)}]"
        for k, v in components.items()
    )
    swaps = ", ".join(f"{n} in place of {v}" for v, n in p.stands_in.items())
    return f"User design (not the recorded one): {given}" + (f"; {swaps}." if swaps else ".")


def claim_axes(claim: Claim, budget: str = "full") -> list[ComponentAxis]:
    """The axes of ``claim``'s arms at ``budget`` that take ``methods=`` or ``models=``."""
    cfg = claim.config(budget if budget in claim.budgets else "smoke")  # type: ignore[arg-type]
    return list(component_axes(claim.arms(cfg), claim.replicates).values())


__all__ = [
    "ComponentAxis",
    "KINDS",
    "claim_axes",
    "component_axes",
    "design_note",
    "judge_reads",
    "plan",
    "with_components",
]
