"""One generic registry: components are registered by name with a pydantic model of their params.

Each package (``tasks``, ``models``, ``methods``, ``probes``) owns one ``Registry``. The first lookup
imports every module of that package, so adding a component is adding a file.

    @TASKS.register("modular_arithmetic", ModularParams, papers=(55,))
    def build(params: ModularParams, data_seed: int) -> TaskData: ...
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_serializer

from genlab.errors import SpecError

T = TypeVar("T")


class DuplicateName(ValueError):
    """A component registered under a name its registry already holds (for another object)."""

    def __init__(self, kind: str, name: str) -> None:
        super().__init__(f"{kind} {name!r} is registered twice")
        self.kind, self.name = kind, name


class Params(BaseModel):
    """Base of every component's params: unknown keys are errors, values are validated.

    ``quiet_defaults`` names fields added after runs were recorded, with the value they had
    implicitly before: at that value a field is left out of the serialised params, so specs
    written before it existed keep their run ids (a run's id hashes its params)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    quiet_defaults: ClassVar[dict[str, Any]] = {}

    @model_serializer(mode="wrap")
    def _without_quiet_defaults(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        for key, default in self.quiet_defaults.items():
            if key in data and data[key] == default and type(data[key]) is type(default):
                del data[key]
        return data


class NoParams(Params):
    """For components without params."""


@dataclass(frozen=True)
class Entry(Generic[T]):
    """A registered component: the object, its params model, its doc and the papers it cites."""

    name: str
    obj: T
    params: type[Params]
    papers: tuple[int, ...] = ()
    family: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def summary(self) -> str:
        """The first line of the component's docstring."""
        doc = inspect.getdoc(self.obj) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""

    def defaults(self) -> dict[str, Any]:
        """Params with their defaults (``"<required>"`` where there is none)."""
        out: dict[str, Any] = {}
        for key, info in self.params.model_fields.items():
            out[key] = (
                "<required>" if info.is_required() else info.get_default(call_default_factory=True)
            )
        return out


class Registry(Generic[T]):
    """Named components of one kind (``kind`` is used in error messages: "task", "model", ...)."""

    def __init__(self, kind: str, package: str | None = None) -> None:
        self.kind = kind
        self._package = package
        self._entries: dict[str, Entry[T]] = {}
        self._loaded = package is None

    def register(
        self,
        name: str,
        params: type[Params] = NoParams,
        papers: tuple[int, ...] = (),
        family: str = "",
        **extra: Any,
    ) -> Callable[[T], T]:
        """Decorator that registers ``obj`` under ``name``."""

        def deco(obj: T) -> T:
            if name in self._entries and self._entries[name].obj is not obj:
                raise DuplicateName(self.kind, name)
            self._entries[name] = Entry(name, obj, params, tuple(papers), family, dict(extra))
            return obj

        return deco

    def unregister(self, name: str) -> None:
        """Forget ``name`` (a plugin being reloaded or rolled back)."""
        self._entries.pop(name, None)

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        pkg = importlib.import_module(self._package)  # type: ignore[arg-type]
        for mod in pkgutil.walk_packages(pkg.__path__, prefix=f"{self._package}."):
            if not mod.name.rpartition(".")[2].startswith("_"):
                importlib.import_module(mod.name)  # sub-packages too (claims/<family>/)
        from genlab.plugins import load_entry_points

        load_entry_points()  # installed packages' plugins (entry-point group ``genlab.plugins``)

    def names(self) -> list[str]:
        self._load()
        return sorted(self._entries)

    def entries(self) -> list[Entry[T]]:
        return [self._entries[n] for n in self.names()]

    def get(self, name: str) -> Entry[T]:
        self._load()
        if name not in self._entries:
            allowed = ", ".join(self.names()) or "(none registered)"
            raise SpecError(f"unknown {self.kind} {name!r}; allowed: {allowed}")
        return self._entries[name]

    def __contains__(self, name: str) -> bool:
        self._load()
        return name in self._entries

    def params(self, name: str, params: dict[str, Any], where: str) -> Params:
        """Validate ``params`` for component ``name``; errors name the field as ``where.key``."""
        entry = self.get(name)
        try:
            return entry.params.model_validate(params)
        except ValidationError as exc:
            raise SpecError(
                format_validation_error(exc, entry.params, prefix=f"{where}.")
            ) from None


def _fields_at(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> list[str]:
    """The field names allowed at ``loc`` inside ``model`` (empty when it cannot be told)."""
    for part in loc:
        if model is None or part not in model.model_fields:
            return []
        ann = model.model_fields[part].annotation
        model = ann if inspect.isclass(ann) and issubclass(ann, BaseModel) else None
    return list(model.model_fields) if model is not None else []


def format_validation_error(
    exc: ValidationError, model: type[BaseModel] | None = None, prefix: str = ""
) -> str:
    """One line per problem: ``field.path: what is wrong (got value)``."""
    lines = []
    for err in exc.errors():
        loc = prefix + ".".join(str(p) for p in err["loc"]) if err["loc"] else prefix.rstrip(".")
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            allowed = _fields_at(model, tuple(err["loc"][:-1]))
            msg = "unknown field" + (f"; allowed: {', '.join(allowed)}" if allowed else "")
        got = err.get("input")
        suffix = (
            f" (got {got!r})"
            if err["type"] != "extra_forbidden" and not isinstance(got, dict)
            else ""
        )
        lines.append(f"{loc}: {msg}{suffix}")
    return "invalid spec:\n  " + "\n  ".join(lines)
