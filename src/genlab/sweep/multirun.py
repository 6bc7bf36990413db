"""A sweep from the command line: ``genlab sweep dg-colored method.name=erm,mixup seed=0..2``.

Each argument is ``key=value``, in the override syntax of ``genlab run`` (``task.p`` is short for
``task.params.p``). A value that lists several values becomes an axis of a grid; one value is an
override of the base:

* ``a,b,c`` — the values, each read as in ``genlab run`` (a TOML literal, else a bare string);
  commas inside brackets, braces or quotes do not split (``model.params.channels=[16,32]`` is one
  value);
* ``0..4`` — the integers 0 to 4, both ends included (``-2..2`` too);
* ``seed=...`` sets the sweep's seeds and ``data_seed=...`` its data seeds (``seeds=3`` is the
  count 0, 1, 2), never an axis.

The base is a preset or a run-spec file, as for ``genlab run``. The command line reads back as a
``SweepSpec`` whose name is the base's, so the same command gives the same sweep id and resumes:
finished runs are skipped, dead ones continue from their checkpoints.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from genlab.errors import SpecError
from genlab.spec import parse_value
from genlab.sweep.spec import SweepSpec, parse_sweep

RANGE = re.compile(r"^(-?\d+)\.\.(-?\d+)$")
SEED_KEYS = {
    "seed": "seeds",
    "seeds": "seeds",
    "data_seed": "data_seeds",
    "data_seeds": "data_seeds",
}
OPEN, CLOSE = "[{(", "]})"


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """``text`` split at each ``sep`` outside brackets, braces, parentheses and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in OPEN:
            depth += 1
        elif ch in CLOSE:
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def parse_values(text: str) -> list[Any]:
    """The values one argument lists: an integer range ``a..b`` (inclusive), else the
    comma-separated values (one value: a list of one)."""
    m = RANGE.match(text.strip())
    if m:
        lo, hi = int(m.group(1)), int(m.group(2))
        if lo > hi:
            raise SpecError(f"range {text!r}: the first end must not exceed the second")
        return list(range(lo, hi + 1))
    parts = split_top_level(text)
    if any(not p for p in parts):
        raise SpecError(f"{text!r}: an empty value between commas")
    return [parse_value(p) for p in parts]


def parse_list(value: Any) -> Any:
    """``[erm,my_penalty]`` (bare names in brackets, which TOML does not read) as a list of
    values; anything else as it is."""
    if isinstance(value, str) and value.startswith("[") and value.endswith("]"):
        inner = value[1:-1].strip()
        return [] if not inner else [parse_value(p) for p in split_top_level(inner)]
    return value


def multirun(base: str, args: Sequence[str]) -> SweepSpec:
    """The sweep that ``genlab sweep BASE key=a,b seed=0..2 ...`` names: a grid over every key
    given several values, overrides for the others. Its fields are validated here; its keys when
    it is expanded (``SweepSpec.expand``, ``plan``: a bad key names the field and what it allows,
    as a ``SpecError``, before anything is written)."""
    data: dict[str, Any] = {
        "name": Path(base).stem if base.endswith((".toml", ".json")) else base,
        "base": base,
        "set": [],
        "grid": {},
    }
    for arg in args:
        key, sep, raw = arg.partition("=")
        key = key.strip()
        if not sep or not key:
            raise SpecError(f"{arg!r} must look like key.path=value, key=a,b,c or key=0..4")
        try:
            values = parse_values(raw.strip())
        except SpecError as exc:
            raise SpecError(f"{key}: {exc}") from None
        if key in SEED_KEYS:
            field = SEED_KEYS[key]
            if field in data:
                raise SpecError(f"{key}: given twice (seed and seeds name the same thing)")
            count = key.endswith("s") and len(values) == 1 and isinstance(values[0], int)
            data[field] = values[0] if count else values
        elif key in data["grid"] or any(s.partition("=")[0] == key for s in data["set"]):
            raise SpecError(f"{key}: given twice")
        elif len(values) > 1:
            data["grid"][key] = values
        else:
            data["set"].append(f"{key}={raw.strip()}")
    if not data["grid"]:
        del data["grid"]
    return parse_sweep(data)


def one_line(text: str) -> str:
    """A validation message of several lines (``invalid spec:`` and one line per problem) as one."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return "; ".join(line for line in lines if line != "invalid spec:")


def check(sweep: SweepSpec, root: Path | None = None) -> None:
    """Every override and every value of every axis of ``sweep`` against the base spec, one at a
    time, so that a bad one is named: ``method.name=sd: unknown method 'sd' ...; allowed: ...``
    (a one-line ``SpecError``)."""
    from genlab.spec import parse_spec, set_path

    try:
        base = sweep.base_dict(root)
        parse_spec(base)
    except SpecError as exc:
        raise SpecError(one_line(str(exc))) from None
    for key, values in sweep.grid.items():
        for v in values:
            try:
                parse_spec(set_path(base, key, v))
            except SpecError as exc:
                raise SpecError(f"{key}={v}: {one_line(str(exc))}") from None


__all__ = ["check", "multirun", "one_line", "parse_list", "parse_values", "split_top_level"]
