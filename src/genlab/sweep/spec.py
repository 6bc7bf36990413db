"""Sweep specs: a base ``RunSpec`` plus axes, expanded into the RunSpecs of a sweep.

A sweep file (TOML) names a base spec (a preset, a spec file, or an inline table), overrides for it,
``seeds`` and ``data_seeds`` (lists, or a count meaning ``0..n-1``), a ``[grid]`` of axes whose
values are all combined, and a ``[random]`` table of axes drawn ``trials`` times. Every random axis
has its own stream, seeded from ``random_seed`` and the axis name alone, so adding or removing an
axis never changes the draws of the others (the sampling discipline of DomainBed's random search,
Gulrajani & Lopez-Paz). Axis names use the override syntax of ``genlab run``: ``task.p`` is short
for ``task.params.p``, ``optimizer.lr`` is a field of the optimiser, ``model`` may take whole tables.

    name = "lr-x-wd"
    base = "grokking"
    set = ["task.p=23", "steps=300"]
    unset = ["batch_size"]          # back to the default (full batch); TOML has no null
    seeds = 3
    [grid]
    "optimizer.weight_decay" = [0.0, 1.0]
    [random]
    trials = 4
    "optimizer.lr" = { log_uniform = [1e-4, 1e-2] }

Three switches of ``[random]`` (all off by default) give DomainBed's protocol
(``scripts/sweep.py``, ``hparams_registry.py``):

* ``method_ranges = true``: each point's method also draws its own hyperparameters from the ranges
  its class registers (``RANGES``, ``genlab.methods.dg_shared.sample_params``), except those the
  sweep fixes (in the base, ``set``, the ``[grid]`` entry or a ``[random]`` axis);
* ``per_trial = true``: fresh draws for every trial (``seed``, ``data_seed``), as DomainBed draws
  from ``seed_hash(hparams_seed, trial_seed)``; otherwise one set of draws serves every trial;
* ``default_draw = true``: draw 0 is the base configuration (no random axis set, the method's params
  at their defaults), as DomainBed's ``hparams_seed`` 0; draws 1..trials-1 are random.

Labels then carry ``draw``. A shared axis (``optimizer.lr``) takes the same value for every method
in one draw of one trial, as DomainBed seeds each hyperparameter by its name alone.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from genlab.design import Design
from genlab.errors import SpecError
from genlab.registry import format_validation_error
from genlab.spec import RunSpec, load_spec_file, parse_spec, parse_value, set_path

RESERVED = {"seed", "data_seed"}  # given by ``seeds`` and ``data_seeds``, never by an axis
SWITCHES = ("method_ranges", "per_trial", "default_draw")  # of [random]; off: ids as before


class Distribution(BaseModel):
    """One random axis: exactly one of ``uniform``, ``log_uniform``, ``int_uniform`` or ``choice``."""

    model_config = ConfigDict(extra="forbid")

    uniform: tuple[float, float] | None = None
    log_uniform: tuple[float, float] | None = None
    int_uniform: tuple[int, int] | None = Field(None, description="inclusive bounds")
    choice: list[Any] | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Distribution:
        given = [k for k in ("uniform", "log_uniform", "int_uniform", "choice") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of uniform, log_uniform, int_uniform, choice "
                f"(got {', '.join(given) or 'none'})"
            )
        lo_hi = self.uniform or self.log_uniform or self.int_uniform
        if lo_hi is not None and lo_hi[0] > lo_hi[1]:
            raise ValueError(f"low must not exceed high, got {list(lo_hi)}")
        if self.log_uniform is not None and self.log_uniform[0] <= 0:
            raise ValueError(f"log_uniform bounds must be > 0, got {list(self.log_uniform)}")
        return self

    def draw(self, rng: np.random.Generator, n: int) -> list[Any]:
        if self.uniform is not None:
            return [float(v) for v in rng.uniform(*self.uniform, size=n)]
        if self.log_uniform is not None:
            lo, hi = np.log(self.log_uniform)
            return [float(v) for v in np.exp(rng.uniform(lo, hi, size=n))]
        if self.int_uniform is not None:
            lo, hi = self.int_uniform
            return [int(v) for v in rng.integers(lo, hi + 1, size=n)]
        assert self.choice is not None
        return [self.choice[int(i)] for i in rng.integers(0, len(self.choice), size=n)]


def axis_stream(random_seed: int, axis: str, *trial: int) -> np.random.Generator:
    """The random stream of one axis: seeded by the sweep's ``random_seed`` and the axis name
    (and, for ``per_trial`` draws, the trial's ``seed`` and ``data_seed``)."""
    digest = hashlib.sha256(axis.encode()).digest()
    return np.random.default_rng([random_seed, int.from_bytes(digest[:8], "little"), *trial])


def draw_seed(*parts: object) -> int:
    """A seed for ``numpy.random.RandomState`` (< 2**32) from the parts' text."""
    digest = hashlib.sha256("/".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "little")


def _method_of(data: dict[str, Any]) -> tuple[str, set[str]]:
    """The method a spec dict names, and the params it sets explicitly."""
    method = data.get("method", "erm")
    if isinstance(method, str):
        return method, set()
    return str(method.get("name", "erm")), set(method.get("params") or {})


def method_ranges(name: str) -> dict[str, tuple[str, float, float]]:
    """The DomainBed-style ``RANGES`` a registered method declares (empty without any)."""
    from genlab.methods import METHODS

    return dict(getattr(METHODS.get(name).obj, "RANGES", {}) or {})


def _count_or_list(v: Any, field: str) -> list[int]:
    if isinstance(v, bool):
        raise ValueError(f"{field} must be a count or a list of integers, got {v!r}")
    if isinstance(v, int):
        if v < 1:
            raise ValueError(f"{field} must be >= 1 (a count) or a non-empty list, got {v}")
        return list(range(v))
    if isinstance(v, list):
        if not v:
            raise ValueError(f"{field} is empty; give a count or a non-empty list")
        if any(not isinstance(s, int) or isinstance(s, bool) or s < 0 for s in v):
            raise ValueError(f"{field} must hold integers >= 0, got {v!r}")
        if len(set(v)) != len(v):
            raise ValueError(f"{field} has repeated values: {v!r}")
        return list(v)
    raise ValueError(f"{field} must be a count or a list of integers, got {v!r}")


class SweepSpec(BaseModel):
    """A base spec and its axes. See the module docstring for the file format."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field("sweep", min_length=1)
    base: str | dict[str, Any] = Field(description="preset name, spec file, or an inline spec")
    set: list[str] = Field(default_factory=list, description="key.path=value overrides of base")
    unset: list[str] = Field(
        default_factory=list,
        description="keys removed from base, back to their defaults "
        "(TOML has no null: unset = ['batch_size'] means full batch)",
    )
    seeds: list[int] = Field(default_factory=lambda: [0])
    data_seeds: list[int] | None = Field(
        None, description="data realisations; default: equal to each seed (paired)"
    )
    grid: dict[str, list[Any]] = Field(default_factory=dict)
    random: dict[str, Distribution] = Field(default_factory=dict)
    trials: int = Field(1, ge=1, description="random draws (with [random] axes or method_ranges)")
    random_seed: int = Field(0, ge=0)
    method_ranges: bool = Field(
        False, description="draw each method's own params from its RANGES too (DomainBed)"
    )
    per_trial: bool = Field(
        False, description="fresh random draws per trial (seed, data_seed), as DomainBed"
    )
    default_draw: bool = Field(
        False, description="draw 0 is the base configuration (DomainBed's hparams_seed 0)"
    )
    imports: list[str] = Field(
        default_factory=list,
        description="plugins for every run (genlab.plugins); paths are relative to the sweep file",
    )

    @model_serializer(mode="wrap")
    def _without_empty_imports(self, handler: Any) -> dict[str, Any]:
        data = handler(self)  # sweeps without plugins keep the ids they had before plugins
        if not data.get("imports"):
            data.pop("imports", None)
        for key in SWITCHES:  # likewise sweeps without DomainBed's switches
            if data.get(key) is False:
                data.pop(key)
        return data

    @model_validator(mode="before")
    @classmethod
    def _trials_inside_random(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("random"), dict):
            rnd = dict(data["random"])
            moved = {k: rnd.pop(k) for k in ("trials", *SWITCHES) if k in rnd}
            if moved:
                data = {**data, **moved, "random": rnd}
                if not rnd and any(k in SWITCHES for k in moved):
                    data.pop("random")  # e.g. only method_ranges: the methods' own axes
        return data

    @field_validator("seeds", mode="before")
    @classmethod
    def _seeds(cls, v: Any) -> list[int]:
        return _count_or_list(v, "seeds")

    @field_validator("data_seeds", mode="before")
    @classmethod
    def _data_seeds(cls, v: Any) -> list[int] | None:
        return None if v is None else _count_or_list(v, "data_seeds")

    @field_validator("grid")
    @classmethod
    def _grid(cls, v: dict[str, list[Any]]) -> dict[str, list[Any]]:
        if not v:
            raise ValueError("[grid] is empty; give at least one axis or leave the table out")
        for axis, values in v.items():
            if not values:
                raise ValueError(f"axis {axis!r} is empty; give at least one value")
        return v

    @field_validator("random")
    @classmethod
    def _random(cls, v: dict[str, Distribution]) -> dict[str, Distribution]:
        if not v:
            raise ValueError("[random] has no axes; give at least one or leave the table out")
        return v

    @model_validator(mode="after")
    def _axes(self) -> SweepSpec:
        both = set(self.grid) & set(self.random)
        if both:
            raise ValueError(f"axes {sorted(both)} are both in [grid] and [random]; pick one")
        for axis in [*self.grid, *self.random]:
            if axis.split(".")[0] in RESERVED:
                raise ValueError(
                    f"axis {axis!r}: use `seeds` / `data_seeds` for seeds, not an axis"
                )
        if (self.per_trial or self.default_draw) and not (self.random or self.method_ranges):
            raise ValueError("per_trial and default_draw need [random] axes or method_ranges")
        return self

    @property
    def domainbed(self) -> bool:
        """Whether any of DomainBed's switches is on (draws are then made by ``draws``)."""
        return any(getattr(self, k) for k in SWITCHES)

    # ---- expansion ---------------------------------------------------------------------------

    def base_dict(self, root: Path | None = None) -> dict[str, Any]:
        """The base spec as a dict with the ``set`` overrides applied (not yet validated)."""
        if isinstance(self.base, dict):
            data = self.base
        else:
            ref = self.base
            if root is not None and (root / ref).is_file():
                ref = str(root / ref)
            data = load_spec_file(ref)
        data = json.loads(json.dumps(data))
        for key in self.unset:
            node, parts = data, key.split(".")
            for part in parts[:-1]:
                node = node.get(part, {}) if isinstance(node, dict) else {}
            if not isinstance(node, dict) or parts[-1] not in node:
                raise SpecError(f"unset: {key!r} is not in the base spec")
            del node[parts[-1]]
        for item in self.set:
            key, sep, raw = item.partition("=")
            if not sep or not key.strip():
                raise SpecError(f"set: {item!r} must look like key.path=value")
            data = set_path(data, key, parse_value(raw.strip()))
        if self.imports:
            from genlab.plugins import resolve_refs

            data["imports"] = resolve_refs(self.imports, root or Path.cwd()) + list(
                data.get("imports", [])
            )
        return data

    def points(self) -> list[dict[str, Any]]:
        """Axis assignments, one per hyperparameter point (grid product x random trials)."""
        grid_keys = list(self.grid)
        combos = [
            dict(zip(grid_keys, vals, strict=True))
            for vals in itertools.product(*(self.grid[k] for k in grid_keys))
        ]
        if not self.random:
            return combos
        draws = {
            k: d.draw(axis_stream(self.random_seed, k), self.trials) for k, d in self.random.items()
        }
        trials = [{k: draws[k][t] for k in self.random} for t in range(self.trials)]
        return [{**c, **t} for c in combos for t in trials]

    def draws(
        self, base: dict[str, Any], trial: tuple[int, int] | None = None
    ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """``(labels, overrides)`` per grid point and draw under DomainBed's switches, for one
        ``trial`` (``(seed, data_seed)``; ``None`` when every trial shares the draws)."""
        from genlab.methods.dg_shared import sample_params

        grid_keys = list(self.grid)
        combos = [
            dict(zip(grid_keys, vals, strict=True))
            for vals in itertools.product(*(self.grid[k] for k in grid_keys))
        ]
        key = () if trial is None else trial
        shared = {
            axis: dist.draw(axis_stream(self.random_seed, axis, *key), self.trials)
            for axis, dist in self.random.items()
        }
        out = []
        for combo in combos:
            data = base
            for k, v in combo.items():
                data = set_path(data, k, v)
            name, fixed = _method_of(data)
            fixed |= {a.split(".")[-1] for a in self.random if a.startswith("method.")}
            ranges = method_ranges(name) if self.method_ranges else {}
            for d in range(self.trials):
                point: dict[str, Any] = {**combo, "draw": d}
                if self.default_draw and d == 0:
                    out.append((point, combo))
                    continue
                point.update({a: shared[a][d] for a in self.random})
                if ranges:
                    seed = draw_seed(self.random_seed, name, *key, d)
                    drawn = sample_params(ranges, seed)
                    point.update(
                        {f"method.params.{p}": v for p, v in drawn.items() if p not in fixed}
                    )
                out.append((point, {k: v for k, v in point.items() if k != "draw"}))
        return out

    def expand(self, root: Path | None = None) -> list[tuple[dict[str, Any], RunSpec]]:
        """``(labels, spec)`` per run: every point x data seed x seed, validated.

        ``labels`` holds the axis values and ``seed``/``data_seed``. Each axis is checked on its own
        first, so an axis naming a field that does not exist is reported by its name.
        """
        base = self.base_dict(root)
        parse_spec(base)  # the base alone must be valid
        for axis, first in [
            *((k, v[0]) for k, v in self.grid.items()),
            *((k, None) for k in self.random),
        ]:
            value = (
                first
                if first is not None
                else self.random[axis].draw(axis_stream(self.random_seed, axis), 1)[0]
            )
            try:
                parse_spec(set_path(base, axis, value))
            except SpecError as exc:
                raise SpecError(f"axis {axis!r}: {exc}") from None
        if not self.domainbed:
            rows = [(point, point) for point in self.points()]
            design = Design(base, rows=rows, seeds=self.seeds, data_seeds=self.data_seeds)
        elif not self.per_trial:
            rows = self.draws(base)
            design = Design(base, rows=rows, seeds=self.seeds, data_seeds=self.data_seeds)
        else:
            parts = [
                Design(
                    base,
                    rows=self.draws(base, (seed, seed if ds is None else ds)),
                    seeds=[seed],
                    data_seeds=None if ds is None else [ds],
                )
                for ds in self.data_seeds or [None]
                for seed in self.seeds
            ]
            design = sum(parts[1:], parts[0])
        return [(arm.labels, arm.spec) for arm in design.expand()]

    @property
    def sweep_id(self) -> str:
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def as_sweep_file(data: dict[str, Any]) -> dict[str, Any]:
    """A stored sweep spec (``SweepSpec.model_dump``, which keeps the empty default tables) as a
    sweep file: without an empty ``grid`` or ``random``, which a file may not hold. It reads back as
    the same spec, with the same sweep id."""
    return {k: v for k, v in data.items() if k not in ("grid", "random") or v}


def parse_sweep(data: dict[str, Any]) -> SweepSpec:
    """Validate a dict into a ``SweepSpec``; problems are a ``SpecError`` naming the field."""
    try:
        return SweepSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(
            format_validation_error(exc, SweepSpec).replace("spec", "sweep", 1)
        ) from None


def load_sweep(path: str | Path) -> tuple[SweepSpec, Path]:
    """Read a sweep TOML/JSON file; returns the spec and the folder relative paths start from."""
    p = Path(path)
    if not p.is_file():
        raise SpecError(f"no sweep file {str(path)!r}")
    return parse_sweep(load_spec_file(str(p))), p.parent


__all__ = [
    "Distribution",
    "RunSpec",
    "SweepSpec",
    "as_sweep_file",
    "load_sweep",
    "parse_sweep",
    "set_path",
]
