"""Run specs: everything that defines a run, validated at the edge, hashed into the run id.

A ``RunSpec`` names a task, a model, a method and probes from the registries, with their params;
the optimiser, the budget, the evaluation schedule, stop rules, ``seed`` (initialisation and batch
order) and ``data_seed`` (the data realisation, shared by every method it is compared with).
Its canonical JSON (defaults filled in, keys sorted) hashes to the run id, so running a spec twice
is a no-op and a sweep resumes by skipping ids it has.

Floor: above the registries (tasks, models, methods, probes) and ``plugins``, whose names it
validates, and below the engine; a kind of run with components of its own (``genlab.fed``'s graph
runs) registers its validation here (``register_resolver``), it is not imported.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_serializer,
    model_validator,
)

from genlab.errors import SpecError
from genlab.plugins import load_all, owners, resolve_refs
from genlab.registry import Registry, format_validation_error

PRESETS_DIR = Path(__file__).parent / "presets"

# kinds of run whose components are not the registries' (genlab.fed's graph runs): each takes a
# spec and returns False if it is not of its kind, else validates it (SpecError) and returns True
RESOLVERS: list[Callable[[RunSpec], bool]] = []


def register_resolver(resolve: Callable[[RunSpec], bool]) -> None:
    """Add a kind of run that validates its own components (see ``RESOLVERS``)."""
    if resolve not in RESOLVERS:
        RESOLVERS.append(resolve)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Component(_Strict):
    """A registered component by ``name`` with its ``params`` (defaults are filled in)."""

    name: str
    params: dict[str, Any] = Field(default_factory=dict)


class FedSpec(_Strict):
    """The ``fed`` table: how a task's training data is split among Flower clients (genlab.fed).

    A run with a ``fed`` table is a federated run: ``steps`` counts server rounds, ``method`` names
    the strategy (``fedavg``, ``fedprox``, ``fedimpro``), ``optimizer`` and ``batch_size`` are each
    client's local optimiser and batch.
    """

    clients: int = Field(10, ge=2, description="clients that train")
    held_out: int = Field(0, ge=0, description="extra clients that never train, only evaluated")
    skew: Literal["label", "quantity", "feature", "iid"] = Field(
        "label",
        description="label: Dirichlet(alpha) labels; quantity: Dirichlet(alpha) sizes; "
        "feature: one training environment per client; iid",
    )
    alpha: float = Field(0.1, gt=0, description="Dirichlet concentration (label/quantity skew)")
    fraction_train: float = Field(1.0, gt=0, le=1, description="share of clients sampled a round")
    local_steps: int = Field(10, ge=1, description="local optimiser steps per round")
    local_test: float = Field(
        0.2, ge=0, lt=1, description="share of each client's data kept for its per-client accuracy"
    )

    @model_validator(mode="after")
    def _enough(self) -> FedSpec:
        if self.clients * self.fraction_train < 1:
            raise ValueError(f"fraction_train={self.fraction_train} samples no client")
        return self


ADAM_EPS = 1e-8  # torch's default; specs that keep it serialise (and hash) as before it existed


class OptimizerSpec(_Strict):
    """The optimiser: AdamW, Adam or SGD, linear warm-up, then a constant or cosine learning rate,
    optional gradient clipping."""

    name: Literal["adamw", "adam", "sgd"] = "adamw"
    lr: float = Field(1e-3, gt=0)
    weight_decay: float = Field(0.0, ge=0)
    betas: tuple[float, float] = (0.9, 0.98)
    eps: float = Field(ADAM_EPS, gt=0, description="Adam's epsilon (Prieto et al. use 1e-25)")
    momentum: float = Field(0.0, ge=0, lt=1)
    warmup_steps: int = Field(0, ge=0)
    decay: Literal["constant", "cosine"] = Field(
        "constant",
        description="after the warm-up: constant, or a cosine down to 0 at the last step",
    )
    grad_clip: float | None = Field(None, gt=0)


class EvalSpec(_Strict):
    """When to evaluate (log-spaced points plus every ``every`` steps) and which probes to run."""

    every: int = Field(100, ge=1)
    log_points: int = Field(30, ge=0, description="log-spaced evaluation steps in [1, steps]")
    probes: list[Component] = Field(
        default_factory=lambda: [Component(name=n) for n in ("accuracy", "loss", "weight_norm")]
    )


class StopRule(_Strict):
    """Stop once ``metric`` on ``split`` has held ``>= threshold`` (or ``<=``) for ``patience`` evals."""

    split: str
    metric: str = "accuracy"
    threshold: float
    mode: Literal["ge", "le"] = "ge"
    patience: int = Field(1, ge=1)


class PluginRef(_Strict):
    """A plugin the run uses (``genlab.plugins``): module, file, hash of its code."""

    module: str
    path: str | None = None
    sha256: str


class RunSpec(_Strict):
    """Everything that defines one run. See the module docstring."""

    task: Component
    model: Component
    method: Component = Field(default_factory=lambda: Component(name="erm"))
    optimizer: OptimizerSpec = Field(default_factory=OptimizerSpec)
    steps: int = Field(
        ge=0,
        description="optimiser updates (0: evaluate the model as built, "
        "e.g. a soup of finished runs: a post-hoc run)",
    )
    batch_size: int | None = Field(None, ge=1, description="per environment; None = full batch")
    eval: EvalSpec = Field(default_factory=EvalSpec)
    stop: list[StopRule] = Field(default_factory=list)
    checkpoint_every: int = Field(500, ge=1)
    dtype: Literal["float32", "float64"] = "float32"
    seed: int = Field(0, ge=0)
    data_seed: int = Field(0, ge=0)
    imports: list[PluginRef] = Field(
        default_factory=list,
        description="plugins to load: module names or .py paths; validation keeps those the spec "
        "uses, as {module, path, sha256} (genlab.plugins)",
    )
    fed: FedSpec | None = Field(
        None, description="a federated run on Flower (genlab.fed): clients, skew, rounds = steps"
    )

    @model_validator(mode="before")
    @classmethod
    def _bare_component_names(cls, data: Any) -> Any:
        """``method=fedimpro`` on the command line is short for ``method.name=fedimpro``."""
        if isinstance(data, dict):
            data = {
                k: {"name": v} if k in COMPONENT_KEYS and isinstance(v, str) else v
                for k, v in data.items()
            }
        return data

    @model_validator(mode="before")
    @classmethod
    def _load_plugins(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("imports"):
            data = {**data, "imports": load_all(data["imports"])}
        return data

    @model_validator(mode="after")
    def _resolve_components(self) -> RunSpec:
        from genlab.methods import METHODS
        from genlab.models import MODELS
        from genlab.probes import PROBES
        from genlab.tasks import TASKS

        TASKS.names()  # loads the registries, and the packages that register kinds of run
        for resolve_kind in RESOLVERS:  # e.g. a federated graph run: components of its own kind
            if resolve_kind(self):
                self._record_plugins()
                return self

        def resolve(reg: Registry, comp: Component, where: str) -> None:
            comp.params = reg.params(comp.name, comp.params, where).model_dump(mode="json")

        resolve(TASKS, self.task, "task.params")
        resolve(MODELS, self.model, "model.params")
        resolve(METHODS, self.method, "method.params")
        for i, probe in enumerate(self.eval.probes):
            resolve(PROBES, probe, f"eval.probes.{i}.params")
        self._record_plugins()
        return self

    def _record_plugins(self) -> None:
        """Record the plugins whose components this spec uses, however they were loaded (``imports``,
        ``genlab --import``, entry points): a plugin it lists but does not use is left out, so
        editing it does not change this run's id."""
        used = [
            ("task", self.task.name),
            ("model", self.model.name),
            ("method", self.method.name),
            *(("probe", p.name) for p in self.eval.probes),
        ]
        self.imports = [PluginRef(**rec) for rec in owners(used)]

    @model_serializer(mode="wrap")
    def _without_empty_imports(self, handler: Any) -> dict[str, Any]:
        """Specs without plugins, without ``fed``, with Adam's default epsilon or a constant learning
        rate, serialise (and hash) exactly as before those fields existed."""
        data = handler(self)
        if not data.get("imports"):
            data.pop("imports", None)
        if data.get("fed") is None:  # likewise for runs that are not federated
            data.pop("fed", None)
        if isinstance(data.get("optimizer"), dict) and data["optimizer"].get("eps") == ADAM_EPS:
            data["optimizer"].pop("eps")
        if isinstance(data.get("optimizer"), dict) and data["optimizer"].get("decay") == "constant":
            data["optimizer"].pop("decay")
        return data

    def canonical_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))

    @property
    def run_id(self) -> str:
        """The first 16 hex digits of the SHA-256 of the canonical JSON, plugin paths left out
        (their module and code hash stay in: moving a plugin keeps the id, editing it does not)."""
        data = self.model_dump(mode="json")
        for ref in data.get("imports", []):
            ref.pop("path", None)
        text = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def parse_spec(data: dict[str, Any]) -> RunSpec:
    """Validate a dict into a ``RunSpec``; any problem is a ``SpecError`` naming the field.
    A ``regime`` table is applied first (``genlab.regime``)."""
    from genlab.regime import apply_regime

    data = apply_regime(data)
    try:
        return RunSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(format_validation_error(exc, RunSpec)) from None


# ---- files, presets and ``key.path=value`` overrides ---------------------------------------


def preset_names() -> list[str]:
    return sorted(p.stem for p in PRESETS_DIR.glob("*.toml"))


def preset_description(name: str) -> str:
    """The first comment line of a preset file."""
    for line in (PRESETS_DIR / f"{name}.toml").read_text().splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""


def load_spec_file(ref: str) -> dict[str, Any]:
    """Read a preset name or a ``.toml`` / ``.json`` file into a plain dict (not yet validated)."""
    path = Path(ref)
    if not path.is_file():
        preset = PRESETS_DIR / f"{ref}.toml"
        if not preset.is_file():
            raise SpecError(
                f"no preset or file {ref!r}; presets: {', '.join(preset_names())} "
                "(or give the path of a .toml or .json file)"
            )
        path = preset
    text = path.read_text()
    try:
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise SpecError(f"{path}: not valid {path.suffix.lstrip('.') or 'toml'}: {exc}") from None
    if isinstance(data, dict) and "imports" in data:  # plugin paths are relative to the file
        data["imports"] = resolve_refs(data["imports"], path.parent)
    return data


def parse_value(text: str) -> Any:
    """A TOML literal (``3``, ``1e-3``, ``true``, ``[1, 2]``, ``"s"``), ``null`` for None (TOML
    has none: ``batch_size=null`` is full batch), else the bare string."""
    if text == "null":
        return None
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


COMPONENT_KEYS = ("task", "model", "method")


def set_path(data: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """A deep copy of ``data`` with the key path ``key`` set to ``value``.

    ``task.p`` is short for ``task.params.p`` (likewise for ``model`` and ``method``), and naming
    another component (``model.name=mlp``) drops the old one's params: it starts from its own
    defaults. Unknown keys are caught by validation afterwards, which names the allowed ones.
    """
    out = json.loads(json.dumps(data))
    parts = key.strip().split(".")
    if not all(parts):
        raise SpecError(f"{key!r} is not a key path like optimizer.lr or task.p")
    if parts[0] in COMPONENT_KEYS and len(parts) > 1 and parts[1] not in ("name", "params"):
        parts.insert(1, "params")
    node = out
    for i, part in enumerate(parts[:-1]):
        nxt = node.setdefault(part, {})
        if not isinstance(nxt, dict):
            raise SpecError(f"{key!r}: {'.'.join(parts[: i + 1])} is not a table")
        node = nxt
    if parts[-1] == "name" and len(parts) == 2 and parts[0] in COMPONENT_KEYS:
        if node.get("name") != value:
            node.pop("params", None)
    node[parts[-1]] = value
    return out


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``key.path=value`` overrides (values are TOML literals) with ``set_path``."""
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise SpecError(f"override {item!r} must look like key.path=value")
        data = set_path(data, key, parse_value(raw.strip()))
    return json.loads(json.dumps(data))


def load_run_spec(ref: str, overrides: list[str] | tuple[str, ...] = ()) -> RunSpec:
    """Preset or file, plus overrides, validated."""
    return parse_spec(apply_overrides(load_spec_file(ref), list(overrides)))
