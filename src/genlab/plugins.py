"""Plugins: the user's own tasks, models, methods, probes and claims, without forking genlab.

A plugin is a Python module or ``.py`` file that registers components with genlab's own decorators
(``TASKS.register``, ``MODELS.register``, ``METHODS.register``, ``PROBES.register``,
``genlab.claims.register``), as DomainBed adds a class to ``algorithms.py`` or lm-evaluation-harness
takes external tasks from a path. Three ways in:

- ``imports = ["mypkg.methods", "./my_penalty.py"]`` in a run spec or sweep file (paths relative to
  the file), or ``genlab --import ./my_penalty.py COMMAND ...`` on the command line;
- the entry-point group ``genlab.plugins`` of an installed package (loaded with the registries):
  ``[project.entry-points."genlab.plugins"] mine = "mypkg.genlab_plugin"``.

A spec records each plugin it lists or whose components it uses as ``{module, path, sha256}``; the
hash (of the file, or of every ``.py`` file of a module's top-level package) enters the run id,
the path does not, so editing the plugin's code gives new runs and moving it does not. A plugin that
raises at import, or registers a name that genlab (or another plugin) already has, is a
``SpecError`` naming the file and the name: exit code 2, nothing registered, nothing written.

Floor: above the registries (it loads genlab's own components to catch a clash), below ``spec``;
the registries call ``load_entry_points`` through the hook this module installs
(``registry.on_load``), they do not import it.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from genlab.errors import SpecError
from genlab.registry import DuplicateName, Registry, kinds, on_load

GROUP = "genlab.plugins"
FILE_PREFIX = "genlab_plugin_"  # file plugins are imported as modules named genlab_plugin_<stem>


@dataclass(frozen=True)
class Plugin:
    """A loaded plugin: its module (or file stem), its file (None for modules found by import), the
    hash of its code when it was loaded, and the ``(kind, name)`` pairs it registered."""

    module: str
    path: str | None
    sha256: str
    names: tuple[tuple[str, str], ...] = ()

    @property
    def where(self) -> str:
        return self.path or self.module

    def record(self) -> dict[str, Any]:
        """What a spec stores: ``{"module", "path", "sha256"}``."""
        return {"module": self.module, "path": self.path, "sha256": self.sha256}


_LOADED: dict[str, Plugin] = {}  # key: the file's absolute path, or the module name
_OWNERS: dict[tuple[str, str], str] = {}  # (kind, name) -> key of the plugin that registered it
_ENTRY_POINTS_LOADED = False


def _registries() -> dict[str, Registry]:
    """Every registry, with genlab's own components loaded (so a clash is caught as one): the four
    component registries, and those of upper floors this process has imported (claims)."""
    import genlab.methods
    import genlab.models
    import genlab.probes
    import genlab.tasks  # noqa: F401 - their packages create the registries

    regs = kinds()
    for reg in regs.values():
        reg.names()
    return regs


def is_path(ref: str) -> bool:
    """A ``.py`` file or anything with a slash is a path; everything else a module name."""
    return ref.endswith(".py") or "/" in ref or "\\" in ref


def resolve_refs(refs: Any, base: Path) -> Any:
    """``imports`` of a spec file with relative paths made absolute against the file's folder."""
    if not isinstance(refs, list):
        return refs  # validation reports it
    return [
        str((base / r).resolve())
        if isinstance(r, str) and is_path(r) and not Path(r).is_absolute()
        else r
        for r in refs
    ]


def _hash_files(files: Iterable[Path], root: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def code_hash(module: str | None = None, path: Path | None = None) -> str:
    """SHA-256 of a file, or of every ``.py`` file of a module's top-level package."""
    if path is not None:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    top = sys.modules[module.split(".")[0]]  # type: ignore[union-attr]
    roots = [Path(p) for p in getattr(top, "__path__", [])]
    if not roots:
        file = Path(top.__file__)  # type: ignore[arg-type]
        return _hash_files([file], file.parent)
    return _hash_files([f for r in roots for f in r.rglob("*.py")], roots[0].parent)


def _import_error(where: str, file: str | None, exc: BaseException) -> SpecError:
    """``plugin FILE failed at import: Error: message (FILE:LINE)``, the line in the plugin's code."""
    frames = traceback.extract_tb(exc.__traceback__)
    inside = [f for f in frames if file and f.filename == file] or frames[-1:]
    at = f" ({inside[-1].filename}:{inside[-1].lineno})" if inside else ""
    return SpecError(f"plugin {where} failed at import: {type(exc).__name__}: {exc}{at}")


def _register_from(
    key: str, where: str, do_import: Any, file: str | None = None
) -> tuple[tuple[str, str], ...]:
    """Run ``do_import()`` and return what it registered; on any error undo it and raise."""
    regs = _registries()
    before = {kind: set(reg.names()) for kind, reg in regs.items()}
    try:
        do_import()
    except DuplicateName as exc:
        _rollback(regs, before)
        owner = _OWNERS.get((exc.kind, exc.name))
        holder = f"plugin {_LOADED[owner].where}" if owner in _LOADED else "genlab"
        raise SpecError(
            f"plugin {where} registers {exc.kind} {exc.name!r}, which {holder} already has; "
            "give it another name"
        ) from None
    except SpecError as exc:
        _rollback(regs, before)
        raise SpecError(f"plugin {where}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - anything a user's module may raise
        _rollback(regs, before)
        raise _import_error(where, file, exc) from None
    names = tuple((k, n) for k, reg in regs.items() for n in reg.names() if n not in before[k])
    for pair in names:
        _OWNERS[pair] = key
    return names


def _rollback(regs: Mapping[str, Registry], before: Mapping[str, set[str]]) -> None:
    for kind, reg in regs.items():
        for name in set(reg.names()) - before[kind]:
            reg.unregister(name)


def _unload(key: str) -> None:
    plugin = _LOADED.pop(key)
    regs = _registries()
    for kind, name in plugin.names:
        regs[kind].unregister(name)
        _OWNERS.pop((kind, name), None)
    sys.modules.pop(FILE_PREFIX + plugin.module, None)


def _load_file(path: Path) -> Plugin:
    key, digest = str(path), code_hash(path=path)
    if key in _LOADED:
        if _LOADED[key].sha256 == digest:
            return _LOADED[key]
        _unload(key)  # the file changed (a notebook edit): load it again
    stem = re.sub(r"\W", "_", path.stem)
    other = next((p for p in _LOADED.values() if p.path and p.module == stem), None)
    if other is not None:
        raise SpecError(
            f"plugin {path}: another plugin file is named {path.name} ({other.path}); rename one"
        )
    name = FILE_PREFIX + stem

    def do_import() -> None:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = module  # dataclasses and pickling look their module up here
        try:
            spec.loader.exec_module(module)  # type: ignore[union-attr]
        except BaseException:
            sys.modules.pop(name, None)
            raise

    names = _register_from(key, str(path), do_import, str(path))
    _LOADED[key] = Plugin(stem, key, digest, names)
    return _LOADED[key]


def _defined_in(obj: Any, module: str) -> bool:
    where = getattr(obj, "__module__", None) or type(obj).__module__  # instances: their class's
    return where == module or where.startswith(module + ".")


def _load_module(name: str) -> Plugin:
    if name in _LOADED:
        plugin = _LOADED[name]
        if code_hash(module=name) != plugin.sha256:
            raise SpecError(
                f"plugin module {name} changed on disk since this process imported "
                "it; start a new process (or use a .py file plugin, which reloads)"
            )
        return plugin
    try:
        spec = importlib.util.find_spec(name)
    except ModuleNotFoundError:
        spec = None
    except Exception as exc:  # noqa: BLE001 - a parent package raising at import
        raise _import_error(name, None, exc) from None
    if spec is None:
        raise SpecError(f"imports: no module {name!r} (nor a file: paths end in .py)")
    where = f"{name} ({spec.origin})" if spec.origin else name
    imported_before = name in sys.modules
    names = _register_from(name, where, lambda: importlib.import_module(name), spec.origin)
    if imported_before:  # registered before we looked (a notebook's import): go by defining module
        names = tuple(
            (k, e.name)
            for k, reg in _registries().items()
            for e in reg.entries()
            if _defined_in(e.obj, name) and (k, e.name) not in _OWNERS
        )
        for pair in names:
            _OWNERS[pair] = name
    _LOADED[name] = Plugin(name, None, code_hash(module=name), names)
    return _LOADED[name]


def load(ref: str | Mapping[str, Any], base: Path | None = None) -> Plugin:
    """Import a plugin by module name, by path (relative to ``base``, default the working folder),
    or from a spec's record ``{module, path, sha256}`` (whose hash must still match)."""
    if isinstance(ref, Mapping):
        plugin = load(ref.get("path") or ref.get("module") or "", base)
        if ref.get("sha256") not in (None, plugin.sha256):
            raise SpecError(
                f"plugin {plugin.where} changed since this spec was made "
                f"(sha256 {str(ref['sha256'])[:12]}… now {plugin.sha256[:12]}…)"
            )
        return plugin
    if not isinstance(ref, str) or not ref.strip():
        raise SpecError(f"imports: each entry is a module name or a .py path, got {ref!r}")
    if not is_path(ref):
        return _load_module(ref.strip())
    path = ((base or Path.cwd()) / ref).resolve()
    if not path.is_file():
        raise SpecError(f"imports: no plugin file {ref!r} (looked for {path})")
    return _load_file(path)


def load_all(refs: Iterable[str | Mapping[str, Any]], base: Path | None = None) -> list[dict]:
    """Load each plugin; their records, one per plugin, in order."""
    if isinstance(refs, str | Mapping):
        raise SpecError(f"imports must be a list of module names or .py paths, got {refs!r}")
    records: dict[str, dict] = {}
    for ref in refs:
        plugin = load(ref, base)
        records.setdefault(plugin.path or plugin.module, plugin.record())
    return list(records.values())


def owners(components: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    """Records of the plugins that registered any of these ``(kind, name)`` components."""
    keys = dict.fromkeys(_OWNERS[c] for c in components if c in _OWNERS)
    return [_LOADED[k].record() for k in keys if k in _LOADED]


def loaded() -> list[Plugin]:
    return list(_LOADED.values())


def load_entry_points() -> None:
    """Import the modules named by installed packages under the ``genlab.plugins`` group (once)."""
    global _ENTRY_POINTS_LOADED
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True
    for ep in metadata.entry_points(group=GROUP):  # none: nothing else is loaded
        module = ep.value.split(":")[0].strip()
        plugin = _load_module(module)
        if ":" in ep.value:  # "pkg.mod:setup" names a function that registers the components
            names = _register_from(module, f"{module} (entry point {ep.name})", ep.load())
            _LOADED[module] = Plugin(plugin.module, None, plugin.sha256, plugin.names + names)


on_load(load_entry_points)  # installed packages' plugins load with the registries
