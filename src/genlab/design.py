"""A labelled design: a base spec, axes and seeds, expanded into ``(labels, RunSpec)`` arms.

One expansion serves claims, sweeps (``SweepSpec``), the model zoo and the phase grids. An axis is
either a list of values set at the axis' own path (``"optimizer.lr": [1e-3, 3e-3]``, the override
syntax of ``genlab run``: ``task.p`` is short for ``task.params.p``), or a mapping from a label to
the overrides it stands for, when one arm changes several fields at once:

    Design(base, axes={
        "arch": {"lstm": {"model": {"name": "lstm"}, "optimizer.lr": 3e-3},
                 "transformer": {"model": {"name": "transformer"}, "optimizer.lr": 1e-3}},
        "task.train_fraction": [0.3, 0.5],
    }, seeds=3)

Axes are combined as a product; each point is run for every seed (``data_seed`` equals the seed
unless ``data_seeds`` are given, so paired arms see the same data). ``labels`` hold the axis labels
plus ``seed`` and ``data_seed``. Designs add: ``design_a + design_b`` runs both. Instead of axes,
``rows`` may list the points directly (a random search's draws).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from genlab.errors import SpecError
from genlab.spec import RunSpec, parse_spec, set_path

Labels = dict[str, Any]


@dataclass(frozen=True)
class Arm:
    """One run of a design: what it stands for (``labels``) and its validated spec."""

    labels: Labels
    spec: RunSpec


def _axis_items(name: str, axis: Sequence[Any] | Mapping[Any, Any]) -> list[tuple[Any, dict]]:
    """``(label, overrides)`` for each value of an axis."""
    if isinstance(axis, Mapping):
        items = [(label, dict(over)) for label, over in axis.items()]
    else:
        items = [(value, {name: value}) for value in axis]
    if not items:
        raise SpecError(f"axis {name!r} is empty; give at least one value")
    return items


@dataclass
class Design:
    """``base`` (a spec dict) x the product of ``axes`` x ``seeds`` (a count or a list)."""

    base: dict[str, Any]
    axes: dict[str, Sequence[Any] | Mapping[Any, Any]] = field(default_factory=dict)
    seeds: int | Sequence[int] = 1
    data_seeds: Sequence[int] | None = None
    rows: Sequence[tuple[Labels, dict[str, Any]]] | None = None
    extra: list[Design] = field(default_factory=list, repr=False)

    def __add__(self, other: Design) -> Design:
        return Design(
            self.base, self.axes, self.seeds, self.data_seeds, self.rows, [*self.extra, other]
        )

    def points(self) -> Iterator[tuple[Labels, dict[str, Any]]]:
        """``(labels, overrides)`` for each point: the given ``rows`` (labels with the overrides
        they stand for, e.g. a random search's draws), else the product of the axes."""
        if self.rows is not None:
            yield from ((dict(labels), dict(over)) for labels, over in self.rows)
            return
        names = list(self.axes)
        per_axis = [_axis_items(n, self.axes[n]) for n in names]
        for combo in itertools.product(*per_axis):
            labels, overrides = {}, {}
            for name, (label, over) in zip(names, combo, strict=True):
                labels[name] = label
                overrides.update(over)
            yield labels, overrides

    def seed_list(self) -> list[int]:
        return list(range(self.seeds)) if isinstance(self.seeds, int) else list(self.seeds)

    def expand(self) -> list[Arm]:
        """Every arm, validated; a spec repeated by two points is run once (the first label)."""
        base = json.loads(json.dumps(self.base))
        out: list[Arm] = []
        seen: set[str] = set()
        for labels, overrides in self.points():
            data = base
            for key, value in overrides.items():
                data = set_path(data, key, value)
            for ds in self.data_seeds or [None]:
                for seed in self.seed_list():
                    d = {**data, "seed": seed, "data_seed": seed if ds is None else ds}
                    spec = parse_spec(d)
                    if spec.run_id not in seen:
                        seen.add(spec.run_id)
                        out.append(Arm({**labels, "seed": seed, "data_seed": d["data_seed"]}, spec))
        for other in self.extra:
            for arm in other.expand():
                if arm.spec.run_id not in seen:
                    seen.add(arm.spec.run_id)
                    out.append(arm)
        return out


__all__ = ["Arm", "Design", "Labels"]


# ---- phase grids (``genlab.analysis.phases``) --------------------------------------------------


def _numeric_fields(d: dict[str, Any], prefix: str = "") -> list[str]:
    out = []
    for k, v in d.items():
        if isinstance(v, dict):
            out += _numeric_fields(v, f"{prefix}{k}.")
        elif isinstance(v, int | float) and not isinstance(v, bool):
            out.append(prefix + k)
    return out


def check_axis(base: dict[str, Any], path: str, values: list[Any]) -> None:
    """``SpecError`` unless ``path`` is a numeric field of the spec ``base`` and ``values`` are
    numbers (a dotted path in full: ``optimizer.lr``, ``task.params.train_fraction``)."""
    fields = _numeric_fields(parse_spec(base).model_dump(mode="json"))
    if path not in fields:
        raise SpecError(
            f"phase axis {path!r} is not a numeric field of the spec; numeric fields: "
            f"{', '.join(fields)}"
        )
    if not values or any(isinstance(v, bool) or not isinstance(v, int | float) for v in values):
        raise SpecError(
            f"phase axis {path!r}: values must be a non-empty list of numbers, got {values!r}"
        )


def phase_design(
    base: dict[str, Any], x: str, xs: list[float], y: str, ys: list[float], seeds: int = 1
) -> Design:
    """The grid ``x`` x ``y`` over ``base`` (both checked to be numeric spec fields), per seed;
    each arm is labelled by the two paths."""
    check_axis(base, x, xs)
    check_axis(base, y, ys)
    return Design(base, axes={x: xs, y: ys}, seeds=seeds)
