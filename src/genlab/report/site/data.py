"""What the site shows, gathered from the store and the registries (no HTML here).

Claim metadata is each claim's ``describe()`` (what ``genlab claims list --json`` prints), for the
claims the caller passes (the CLI passes the registry, plugins included): the site renders whatever
keys a row has, so a richer claim layer shows up without changing the site, and this package never
imports the claims.
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from genlab.store import Store

VERDICTS = ("reproduced", "not reproduced", "inconclusive")


def slug(text: str) -> str:
    """``not reproduced`` -> ``not-reproduced``; claim ids keep their dots (valid in file names)."""
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in text.lower())


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


@dataclass
class SiteData:
    papers: list[Any]
    claims: dict[str, dict[str, Any]]  # id -> row of `claims list --json`
    verdicts: dict[str, list[VerdictRecord]]  # claim id -> newest first
    sweeps: pd.DataFrame

    def latest(self, claim_id: str) -> VerdictRecord | None:
        """The newest full-budget verdict, else the newest of any budget."""
        recs = self.verdicts.get(claim_id, [])
        return next((r for r in recs if r.budget == "full"), recs[0] if recs else None)


def gather(store: Store, registered: Mapping[str, Any]) -> SiteData:
    """The site's data: ``registered`` maps claim ids to the claim objects of this process."""
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
    return SiteData(list(catalogue().values()), claims, verdicts, store.sweeps())
