"""One generic registry: components are registered by name with a pydantic model of their params.

Each package (``tasks``, ``models``, ``methods``, ``probes``) owns one ``Registry``. The first lookup
imports every module of that package, so adding a component is adding a file; then the modules of
``EXTENSIONS``, genlab's own packages on upper floors that register components of these kinds
(components built from finished runs) or a kind of run (federated runs), imported by name as an
installed plugin's entry point is; then the hooks of ``on_load`` (``genlab.plugins`` installs the
loading of entry points there).

Floor: the bottom: imports nothing of genlab but ``errors``; the packages it loads by name
register themselves into it.

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

# genlab's packages above the engine that register tasks, models, methods or probes: imported by
# name on every registry's first lookup, as an entry-point plugin is (never imported from here)
EXTENSIONS = ("genlab.derived", "genlab.fed")
_KINDS: dict[str, Registry] = {}  # kind -> the registry of a package of components
_LOAD_HOOKS: list[Callable[[], None]] = []


def kinds() -> dict[str, Registry]:
    """The registries backed by a package (task, model, method, probe, claim, ...), by kind: each
    is recorded when its package creates it, so this lists those this process has imported."""
    return dict(_KINDS)


def on_load(hook: Callable[[], None]) -> None:
    """Call ``hook()`` after any registry has loaded its package (once per registry)."""
    if hook not in _LOAD_HOOKS:
        _LOAD_HOOKS.append(hook)


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
        if package is not None:
            _KINDS[kind] = self

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
        for package in EXTENSIONS:  # their ``__init__`` registers what they add
            importlib.import_module(package)
        for hook in list(_LOAD_HOOKS):  # e.g. installed packages' plugins (genlab.plugins)
            hook()

    def names(self) -> list[str]:
        self._load()
        return sorted(self._entries)

    def entries(self) -> list[Entry[T]]:
        return [self._entries[n] for n in self.names()]

    def get(self, name: str) -> Entry[T]:
        self._load()
        if name not in self._entries:
            from genlab.suggest import unknown_name

            raise SpecError(unknown_name(self.kind, name, self.names()))
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
