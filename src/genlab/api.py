"""The Python API, for notebooks and scripts: ``genlab.run``, ``genlab.sweep``, ``genlab.results``.

The same things the command line does, returning Python objects; every result is in the store, whose
``Store(...).metrics()`` is a long-format pandas DataFrame. See ``examples/notebook.py``.

    import genlab
    store = genlab.Store("/tmp/nb")
    r = genlab.run("dg-colored", "steps=200", store=store)       # a preset, a file, a dict, a RunSpec
    s = genlab.sweep({"base": "dg-colored", "grid": {"method.name": ["erm", "irm"]}}, store=store)
    genlab.results(s, store)            # one row per run: its labels and final metrics
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from genlab.engine.train import RunResult
from genlab.errors import SpecError
from genlab.spec import RunSpec, apply_overrides, load_spec_file, parse_spec
from genlab.store import Store
from genlab.sweep import SweepResult, SweepSpec, load_sweep, make_executor, parse_sweep
from genlab.sweep import run_sweep as _run_sweep

StoreLike = Store | str | Path | None


def _store(store: StoreLike) -> Store:
    return store if isinstance(store, Store) else Store(store)


def _with_imports(data: dict[str, Any], imports: Sequence[str]) -> dict[str, Any]:
    if imports:
        data = {**data, "imports": [*imports, *data.get("imports", [])]}
    return data


def run_spec_of(
    spec: RunSpec | Mapping[str, Any] | str | Path,
    overrides: Sequence[str] = (),
    imports: Sequence[str] = (),
) -> RunSpec:
    """A validated ``RunSpec`` from a preset name, a spec file, a dict or a RunSpec, with
    ``key.path=value`` overrides and plugins (module names or ``.py`` paths)."""
    if isinstance(spec, RunSpec):
        data = spec.model_dump(mode="json")
    elif isinstance(spec, Mapping):
        data = dict(spec)
    else:
        data = load_spec_file(str(spec))
    return parse_spec(apply_overrides(_with_imports(data, imports), list(overrides)))


def run(
    spec: RunSpec | Mapping[str, Any] | str | Path,
    *overrides: str,
    store: StoreLike = None,
    imports: Sequence[str] = (),
    progress: bool = False,
) -> RunResult:
    """Train one run (or return the finished one: a spec is run once), like ``genlab run``."""
    from genlab.engine import run_spec

    return run_spec(run_spec_of(spec, overrides, imports), _store(store), progress=progress)


def sweep(
    spec: SweepSpec | Mapping[str, Any] | str | Path,
    store: StoreLike = None,
    executor: str = "serial",
    workers: int | None = None,
    imports: Sequence[str] = (),
    progress: bool = False,
) -> SweepResult:
    """Run a sweep (a sweep file, a dict in the sweep-file format, or a SweepSpec), like
    ``genlab sweep``; finished runs are skipped. Relative paths in a dict are from the working
    folder, in a file from the file's folder."""
    root: Path | None = None
    if isinstance(spec, SweepSpec):
        sw = spec
    elif isinstance(spec, Mapping):
        sw = parse_sweep(dict(spec))
    else:
        sw, root = load_sweep(spec)
    if imports:
        sw = sw.model_copy(update={"imports": [*imports, *sw.imports]})
    execute = make_executor(executor, workers)
    return _run_sweep(sw, _store(store), execute, root, progress=progress)


def results(runs: SweepResult | str | Sequence[str], store: StoreLike = None) -> pd.DataFrame:
    """One row per run of a sweep (a SweepResult, or a sweep id or name in the store) or of a list
    of run ids: ``run_id``, ``status``, the spec fields that vary (``method.name``, ...), ``seed``,
    ``data_seed``, then each final ``split:metric`` value (the run's last evaluation)."""
    from genlab.analysis.aggregate import final_values, run_labels

    st = _store(store)
    if isinstance(runs, SweepResult):
        ids = [r["run_id"] for r in runs.runs]
    elif isinstance(runs, str):
        found = st.sweep(runs)
        if found is None:
            raise SpecError(f"no sweep {runs!r} in store {st.root}")
        ids = [r["run_id"] for r in found["runs"]]
    else:
        ids = list(runs)
    table = st.runs(where=f"run_id IN ({','.join('?' * len(ids))})", args=tuple(ids))
    if table.empty:
        return pd.DataFrame(columns=["run_id", "status"])
    labels, _ = run_labels(table)
    final = final_values(st.metrics(ids))
    wide = final.assign(key=final["split"] + ":" + final["metric"]).pivot(
        index="run_id", columns="key", values="value"
    )
    out = (
        table[["run_id", "status"]]
        .merge(labels, on="run_id")
        .merge(wide, left_on="run_id", right_index=True, how="left")
    )
    order = {r: i for i, r in enumerate(ids)}
    return out.sort_values("run_id", key=lambda s: s.map(order)).reset_index(drop=True)
