"""The package layering of DESIGN.md, read from the source by AST: no import cycle between
genlab's packages counting every import statement (inside functions too, relative ones resolved),
the conformance kit imported only by the CLI, drawing only in ``genlab.report``, analysis without
report, and components that do not reach into ``genlab.tasks``."""

from __future__ import annotations

import ast
import graphlib
import itertools
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "genlab"


def _unit(path: Path) -> str:
    """``genlab/engine/train.py`` -> ``engine``; ``genlab/spec.py`` -> ``spec``."""
    rel = path.relative_to(SRC).with_suffix("")
    return rel.parts[0]


def _imports(path: Path, module_level: bool = True) -> list[str]:
    """Modules imported by ``path``: at module level (incl. inside if/try), or anywhere."""
    tree = ast.parse(path.read_text())
    nodes = ast.walk(tree) if not module_level else _module_level(tree.body)
    out = []
    for n in nodes:
        if isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
            out.append(n.module)
        elif isinstance(n, ast.Import):
            out += [a.name for a in n.names]
    return out


def _module_level(body: list[ast.stmt]):
    for node in body:
        if isinstance(node, ast.If | ast.Try):
            yield from ast.walk(node)
        else:
            yield node


def _files():
    return [p for p in SRC.rglob("*.py") if p.parent != SRC or p.name != "__init__.py"]


def _graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for path in _files():
        me = _unit(path)
        for mod in _imports(path):
            parts = mod.split(".")
            if parts[0] == "genlab" and len(parts) > 1 and parts[1] != me:
                edges[me].add(parts[1])
    return edges


def _module_of(path: Path) -> list[str]:
    """``src/genlab/engine/train.py`` -> ``["genlab", "engine", "train"]`` (a package: its name)."""
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _is_module(dotted: str) -> bool:
    rel = Path(*dotted.split(".")[1:])
    return (SRC / rel).with_suffix(".py").is_file() or (SRC / rel / "__init__.py").is_file()


def _every_import(path: Path, text: str | None = None) -> list[tuple[str, int]]:
    """``(module, line)`` for every import statement of ``path``, wherever it stands (module
    level, functions, ``if TYPE_CHECKING``): ``from . import x`` and ``from ..a import b``
    resolved against the file's package, ``from genlab import x`` read as ``genlab.x`` when ``x``
    is a module."""
    here = _module_of(path)
    package = here if path.name == "__init__.py" else here[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text() if text is None else text)):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                out.append(
                    (sub if sub.startswith("genlab.") and _is_module(sub) else mod, node.lineno)
                )
    return out


def full_graph() -> dict[str, dict[str, list[str]]]:
    """Package -> the packages it imports -> where (``file:line``), over every import statement
    of ``src/genlab`` (a package is a top-level sub-package or module of genlab; the root
    ``genlab/__init__.py``, the lazy facade, is none)."""
    edges: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in _files():
        me = _unit(path)
        for mod, line in _every_import(path):
            parts = mod.split(".")
            if parts[0] == "genlab" and len(parts) > 1 and parts[1] != me:
                edges[me][parts[1]].append(f"{path.relative_to(SRC)}:{line}")
    return edges


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return exc.args[1]
    return None


def test_no_import_cycle_between_packages():
    graph = _graph()
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError naming the cycle


def test_no_import_cycle_counting_imports_inside_functions():
    """Layers point one way, every import statement counted (DESIGN.md): a cycle is named with
    one ``file:line`` per edge."""
    edges = full_graph()
    cycle = _cycle({a: set(bs) for a, bs in edges.items()})
    # graphlib lists each node before one that depends on (imports) it
    where = [f"{b} -> {a} ({edges[b][a][0]})" for a, b in itertools.pairwise(cycle or [])]
    assert cycle is None, "import cycle between packages: " + "; ".join(where)


def test_only_the_cli_imports_the_conformance_kit():
    edges = full_graph()
    users = {a: bs["conformance"] for a, bs in edges.items() if "conformance" in bs}
    assert set(users) <= {"cli"}, (
        f"genlab.conformance is for tests and the CLI; imported by {users}"
    )


def test_the_graph_sees_imports_inside_functions_and_relative_ones():
    """The reader resolves what the old module-level check missed."""
    edges = full_graph()
    assert "derived" in edges["conformance"]  # conformance/tiny.py: inside a function
    text = (
        "def f():\n    from . import checkpoint\n    from ..fed import runner\n"
        "    from genlab import store, __version__\n"
    )
    found = [m for m, _ in _every_import(SRC / "engine" / "somewhere.py", text)]
    assert found == ["genlab.engine.checkpoint", "genlab.fed.runner", "genlab.store", "genlab"]


def test_a_detected_cycle_would_fail():  # the checks above can fail
    graph = _graph()
    graph["spec"] = graph["spec"] | {"engine"}
    graph["engine"] = graph["engine"] | {"spec"}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError:
        pass
    else:
        raise AssertionError("a cycle engine <-> spec went unnoticed")
    full = {a: set(bs) for a, bs in full_graph().items()}
    assert _cycle(full) is None
    full["weights"].add("derived")  # e.g. weights/load.py importing a derived model in a function
    assert _cycle(full) is not None, "a cycle weights <-> derived went unnoticed"


def test_only_report_draws():
    for path in _files():
        if _unit(path) == "report":
            continue
        mods = _imports(path, module_level=False)
        assert "matplotlib.pyplot" not in mods, f"{path.relative_to(SRC)} draws outside report"
        assert "matplotlib.use" not in path.read_text(), path.relative_to(SRC)
    uses = [p for p in SRC.rglob("*.py") if "matplotlib.use(" in p.read_text()]
    assert uses == [SRC / "report" / "__init__.py"]


def test_analysis_does_not_import_report():
    for path in (SRC / "analysis").rglob("*.py"):
        mods = _imports(path, module_level=False)
        assert not any(m.startswith("genlab.report") for m in mods), path.relative_to(SRC)


def test_components_read_data_not_tasks():
    """Models, methods, probes and datasets take ``genlab.data``'s contract, not the task
    registry's modules (a probe may look a task up by name inside a function)."""
    for unit in ("models", "methods", "probes", "datasets"):
        for path in (SRC / unit).rglob("*.py"):
            mods = _imports(path)
            assert not any(m.startswith("genlab.tasks") for m in mods), path.relative_to(SRC)


def test_report_is_given_claims_not_importing_them():
    """The CLI passes the registered claims to the reports; report imports neither claims nor cli
    (claims import report's figure kinds)."""
    for path in (SRC / "report").rglob("*.py"):
        mods = _imports(path, module_level=False)
        bad = [m for m in mods if m.startswith(("genlab.claims", "genlab.cli"))]
        assert not bad, f"{path.relative_to(SRC)} imports {bad}"
