"""Browsing the store's runs: one flat row per run, filtered, sorted and cut to columns.

A row holds the run's fields (``run_id``, ``status``, ``step``, ``wall_s``, ...), its labels
(``task``, ``model``, ``method``, ``seed``, ``data_seed``: the components' names and the seeds),
every config key of its spec as a dotted path (``optimizer.lr``, ``task.params.p``, also written
``task.p`` as in overrides) and its final metrics (``test/heldout:accuracy``). ``--where``,
``--sort`` and ``--columns`` take any of these; a key no run has is a ``SpecError`` naming it and
what is allowed.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from genlab.errors import SpecError
from genlab.suggest import close_matches

FIELDS = ("run_id", "status", "step", "wall_s", "created", "finished", "host", "version", "error")
LABELS = ("task", "model", "method", "seed", "data_seed")
DEFAULT_COLUMNS = ("run_id", "status", "step", "wall_s", "task", "model", "method", "seed")
COMPONENTS = ("task", "model", "method")


def _flatten(obj: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(obj, dict) and obj:
        for key, value in obj.items():
            _flatten(value, f"{prefix}.{key}" if prefix else str(key), out)
    elif prefix:
        out[prefix] = json.dumps(obj) if isinstance(obj, list | dict) else obj


def run_rows(runs: pd.DataFrame) -> list[dict[str, Any]]:
    """A flat row per run of ``Store.runs()``: fields, labels, config keys and final metrics."""
    rows = []
    for r in runs.to_dict("records"):
        spec = json.loads(r["spec"])
        summary = json.loads(r["summary"]) if r.get("summary") else {}
        row: dict[str, Any] = {}
        _flatten(spec, "", row)
        for comp in COMPONENTS:  # ``task.p`` beside ``task.params.p``, as overrides write it
            for key, value in list(row.items()):
                if key.startswith(f"{comp}.params."):
                    row.setdefault(f"{comp}.{key.removeprefix(f'{comp}.params.')}", value)
            row[comp] = spec.get(comp, {}).get("name")
        row.update(summary.get("final", {}))
        row.update({f: r.get(f) for f in FIELDS})
        row["step"], row["wall_s"] = int(r["step"] or 0), float(r["wall_s"] or 0.0)
        rows.append(row)
    return rows


def known_keys(rows: Iterable[dict[str, Any]]) -> list[str]:
    """Fields and labels first, then every other key some run has (config keys, metrics)."""
    seen = {k for row in rows for k in row}
    return [*FIELDS, *LABELS, *sorted(seen - set(FIELDS) - set(LABELS))]


def check_key(key: str, known: Sequence[str], option: str) -> str:
    """``key`` if some run has it, else a ``SpecError`` naming it, a close match and the allowed
    keys."""
    if key in known:
        return key
    close = [k for k in known if k.endswith(f":{key}")] or close_matches(key, known)
    hint = f" (did you mean {' or '.join(map(repr, close[:3]))}?)" if close else ""
    raise SpecError(f"{option}: unknown key {key!r}{hint}; allowed: {', '.join(known)}")


def parse_where(items: Sequence[str], known: Sequence[str]) -> list[tuple[str, list[str]]]:
    """``KEY=VALUE`` filters (``VALUE`` may list alternatives: ``method=erm,irm``)."""
    out = []
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise SpecError(f"--where takes KEY=VALUE (e.g. method=erm), got {item!r}")
        out.append((check_key(key.strip(), known, "--where"), value.split(",")))
    return out


def _equal(have: Any, want: str) -> bool:
    if have is None:
        return want.lower() in ("none", "null", "")
    if isinstance(have, bool):
        return str(have).lower() == want.lower()
    if isinstance(have, int | float):
        try:
            return math.isclose(float(have), float(want), rel_tol=1e-9, abs_tol=0.0)
        except ValueError:
            return False
    return str(have) == want


def select(rows: list[dict[str, Any]], where: list[tuple[str, list[str]]]) -> list[dict[str, Any]]:
    """The rows matching every filter (any of a filter's alternatives)."""
    return [r for r in rows if all(any(_equal(r.get(k), v) for v in vs) for k, vs in where)]


def _sort_key(value: Any) -> tuple[int, float, str]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return (2, 0.0, "")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def sort_rows(rows: list[dict[str, Any]], key: str, desc: bool = False) -> list[dict[str, Any]]:
    """Sorted by ``key`` (numbers by value), runs without it last either way."""
    have = [r for r in rows if _sort_key(r.get(key))[0] < 2]
    missing = [r for r in rows if _sort_key(r.get(key))[0] == 2]
    return sorted(have, key=lambda r: _sort_key(r.get(key)), reverse=desc) + missing


def parse_columns(text: str | None, known: Sequence[str]) -> list[str]:
    """``a,b,c`` validated (default: ``DEFAULT_COLUMNS``)."""
    if not text:
        return list(DEFAULT_COLUMNS)
    return [check_key(c.strip(), known, "--columns") for c in text.split(",") if c.strip()]


def cell(key: str, value: Any) -> str:
    """A value as the table shows it."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if key == "wall_s":
        return f"{value:.1f}"
    if key in ("created", "finished") and isinstance(value, float):
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(value))
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
