"""The package layering of DESIGN.md, read from the source (module-level imports, by AST): no
import cycle between genlab's packages, drawing only in ``genlab.report``, analysis without
report, and components that do not reach into ``genlab.tasks``."""

from __future__ import annotations

import ast
import graphlib
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


def test_no_import_cycle_between_packages():
    graph = _graph()
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError naming the cycle


def test_a_detected_cycle_would_fail():  # the check above can fail
    graph = _graph()
    graph["spec"] = graph["spec"] | {"engine"}
    graph["engine"] = graph["engine"] | {"spec"}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError:
        return
    raise AssertionError("a cycle engine <-> spec went unnoticed")


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
