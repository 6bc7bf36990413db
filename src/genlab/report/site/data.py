"""What the site shows, gathered from the store and the registries (no HTML here).

Claim metadata is each claim's ``describe()`` (what ``genlab claims list --json`` prints), for the
claims the caller passes (the CLI passes the registry, plugins included): the site renders whatever
keys a row has, so a richer claim layer shows up without changing the site, and this package never
imports the claims.

The recorded verdicts are ``docs/verdicts.json`` of the repository (``tools/verdict_tables.py``
writes it from the stores the verdicts were measured in), found the way ``claims.lock`` is; an
installed wheel has no such file, and then the site shows the store's verdicts only.
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

import genlab
from genlab.errors import SpecError
from genlab.report.templating import slug
from genlab.store import Store

VERDICTS = ("reproduced", "not reproduced", "inconclusive")
BUDGETS = ("full", "smoke")  # the recorded verdict a claim shows: full budget, else smoke
RECORDED = Path(genlab.__file__).resolve().parents[2] / "docs" / "verdicts.json"
__all__ = [
    "BUDGETS",
    "RECORDED",
    "VERDICTS",
    "SiteData",
    "VerdictRecord",
    "claim_row",
    "gather",
    "load_recorded",
    "paper_refs",
    "recorded_reason",
    "reproduce_command",
    "shown_recorded",
    "slug",
    "toml_literal",
]


def claim_row(claim: Any) -> dict[str, Any]:
    """``claim.describe()`` as JSON gives it (tuples as lists, paths as strings)."""
    return json.loads(json.dumps(claim.describe(), default=str))


def toml_literal(v: Any) -> str:
    """A value as ``genlab claims run --set key=VALUE`` reads it back (TOML; ``null`` for None)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(toml_literal(x) for x in v) + "]"
    if isinstance(v, dict):
        return (
            "{" + ", ".join(f"{json.dumps(str(k))} = {toml_literal(x)}" for k, x in v.items()) + "}"
        )
    return json.dumps(str(v))


@dataclass
class VerdictRecord:
    """One recorded verdict of a claim, with what the site adds: the command that reproduces it,
    whether that command gives the same configuration with today's code, extras (provenance, the
    claim's evidence table) and the store's rows of its runs."""

    claim_id: str
    config_id: str
    budget: str
    config: dict[str, Any]
    verdict: str
    statistic: dict[str, Any]
    evidence: str
    figure: str | None
    run_ids: list[str]
    created: float
    command: str = ""
    command_checked: bool | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    runs: pd.DataFrame = field(default_factory=pd.DataFrame)


def reproduce_command(claim: Any, rec: VerdictRecord) -> tuple[str, bool | None]:
    """``genlab claims run ID --budget B --set k=v ...`` for the settings that differ from the
    budget's defaults, and whether it yields the recorded configuration with the code of now (None:
    the claim is not registered here, so it cannot be checked)."""
    from genlab.plugins import _LOADED, _OWNERS

    prefix = "genlab"
    owner = _OWNERS.get(("claim", rec.claim_id))
    if owner in _LOADED:
        prefix += f" --import {shlex.quote(_LOADED[owner].where)}"
    base = f"{prefix} claims run {rec.claim_id} --budget {rec.budget}"
    if claim is None:
        return base, None
    try:
        defaults = claim.config(rec.budget).model_dump(mode="json")
    except Exception:  # noqa: BLE001 - a budget the claim no longer has
        return base, False
    sets = {k: v for k, v in rec.config.items() if defaults.get(k, object()) != v}
    cmd = base + "".join(f" --set {shlex.quote(f'{k}={toml_literal(v)}')}" for k, v in sets.items())
    try:
        from genlab.spec import parse_value

        again = claim.config(rec.budget, {k: parse_value(toml_literal(v)) for k, v in sets.items()})
        return cmd, claim.config_id(again) == rec.config_id
    except Exception:  # noqa: BLE001 - a setting today's Config rejects
        return cmd, False


def paper_refs(papers: Any) -> list[dict[str, Any]]:
    """A claim's papers as ``{"row", "authors", "title"}``, from ``Ref`` objects, ``describe()``'s
    dicts, bare catalogue rows (ints) or ``docs/verdicts.json``'s entries (a row, or the authors of
    a paper outside the catalogue)."""
    refs = []
    for p in papers or []:
        if isinstance(p, dict):
            ref = {
                "row": p.get("row"),
                "authors": p.get("authors", ""),
                "title": p.get("title", ""),
            }
        elif isinstance(p, int) and not isinstance(p, bool):
            ref = {"row": p, "authors": "", "title": ""}
        elif isinstance(p, str):
            ref = {"row": None, "authors": p, "title": ""}
        else:
            ref = {
                "row": getattr(p, "row", None),
                "authors": getattr(p, "authors", ""),
                "title": getattr(p, "title", ""),
            }
        refs.append(ref)
    return refs


def load_recorded(path: Path | None = RECORDED) -> dict[str, dict[str, Any]]:
    """``docs/verdicts.json`` by claim id; empty when there is no such file (an installed wheel)."""
    if path is None or not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SpecError(
            f"{path}: not a verdict file ({exc}); remake it with tools/verdict_tables.py"
        ) from None
    if not isinstance(data, dict) or not all(isinstance(d, dict) for d in data.values()):
        raise SpecError(f"{path}: not a verdict file (an object of claim entries expected)")
    return data


@dataclass
class SiteData:
    papers: list[Any]
    claims: dict[str, dict[str, Any]]  # id -> row of `claims list --json`
    verdicts: dict[str, list[VerdictRecord]]  # claim id -> newest first
    sweeps: pd.DataFrame
    recorded: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> docs/verdicts.json
    recorded_from: str | None = None  # the file they were read from

    def latest(self, claim_id: str) -> VerdictRecord | None:
        """The newest full-budget verdict, else the newest of any budget."""
        recs = self.verdicts.get(claim_id, [])
        return next((r for r in recs if r.budget == "full"), recs[0] if recs else None)

    def recorded_verdict(self, claim_id: str) -> tuple[str, dict[str, Any]] | None:
        return shown_recorded(self.recorded.get(claim_id))


def shown_recorded(entry: dict[str, Any] | None) -> tuple[str, dict[str, Any]] | None:
    """The recorded verdict a claim shows, ``(budget, entry)``: the full budget's, else the smoke
    budget's; None when neither was recorded."""
    entry = entry or {}
    return next(
        (
            (b, entry[b])
            for b in BUDGETS
            if isinstance(entry.get(b), dict) and entry[b].get("verdict") in VERDICTS
        ),
        None,
    )


def recorded_reason(rec: dict[str, Any]) -> str:
    """Why a recorded verdict is inconclusive: its ``reason``, else what its evidence says after
    "Inconclusive because" (entries measured under the earlier rules keep it there)."""
    if rec.get("verdict") != "inconclusive":
        return ""
    evidence = str(rec.get("evidence") or "")
    if rec.get("reason"):
        return str(rec["reason"])
    if " Inconclusive because " in evidence:
        return evidence.split(" Inconclusive because ", 1)[1].rstrip(".")
    return ""


def gather(
    store: Store, registered: Mapping[str, Any], recorded: Path | None = RECORDED
) -> SiteData:
    """The site's data: ``registered`` maps claim ids to the claim objects of this process;
    ``recorded`` is the verdict file to show beside the store's (None: none)."""
    from genlab.papers import catalogue

    claims = {cid: claim_row(c) for cid, c in registered.items()}
    verdicts: dict[str, list[VerdictRecord]] = {}
    table = store.verdicts()
    runs = store.runs()
    for row in table.sort_values("created", ascending=False).to_dict(orient="records"):
        rec = VerdictRecord(**row)
        claim = registered.get(rec.claim_id)
        rec.command, rec.command_checked = reproduce_command(claim, rec)
        rec.extras = store.verdict_extras(rec.claim_id, rec.config_id)
        rec.runs = runs[runs["run_id"].isin(rec.run_ids)]
        verdicts.setdefault(rec.claim_id, []).append(rec)
    found = load_recorded(recorded)
    return SiteData(
        list(catalogue().values()),
        claims,
        verdicts,
        store.sweeps(),
        found,
        str(recorded) if found else None,
    )
