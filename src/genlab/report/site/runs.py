"""The runs page (``runs.html``: every run of the store, filterable by kind, preset, status, method
and a final metric) and one page per run (``runs/<id>.html``: its configuration, final metrics,
its curves figure when the store has one, and the command that reproduces it, checked).

A run's kinds: ``claim`` (behind a claim's verdict), ``control`` (behind a control's), ``sweep``
(in a stored sweep), ``single`` (none of these), and ``federated`` or ``post-hoc`` (no training
steps) from its spec. Its preset is the preset it differs least from with the same task and model
(the spec does not record the preset it was made from); its command is that preset with the
differing keys as overrides when that gives the run's id, else the spec file the site writes
beside the page (``runs/<id>.json``).
"""

from __future__ import annotations

import json
import math
import shlex
import shutil
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genlab.report.site.data import SiteData, slug, toml_literal
from genlab.report.site.view import Table
from genlab.report.templating import render
from genlab.store import Store

# a run's status -> the verdict badge whose colour it borrows (running: grey)
STATUS_BADGE = {
    "done": "reproduced",
    "diverged": "inconclusive",
    "failed": "not reproduced",
    "interrupted": "inconclusive",
}


def flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``; lists and empty tables are leaves."""
    if isinstance(obj, dict) and obj:
        out: dict[str, Any] = {}
        for k, v in obj.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: obj} if prefix else {}


@dataclass
class Presets:
    """The presets, validated once when first needed, as flat ``key.path -> value`` dicts."""

    flat: dict[str, dict[str, Any]] = field(default_factory=dict)
    loaded: bool = False

    def load(self) -> dict[str, dict[str, Any]]:
        if not self.loaded:
            from genlab.spec import load_run_spec, preset_names

            for name in preset_names():
                try:
                    self.flat[name] = flatten(load_run_spec(name).model_dump(mode="json"))
                except Exception:  # noqa: BLE001 - e.g. a preset needing an extra not installed
                    continue
            self.loaded = True
        return self.flat

    def nearest(self, spec: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
        """The preset with the run's task and model that differs in the fewest keys, and the
        run's values of the keys it differs in; ``(None, {})`` when no preset has them."""
        run = flatten(spec)
        best: tuple[int, str, dict[str, Any]] | None = None
        for name, flat in self.load().items():
            if (flat.get("task.name"), flat.get("model.name")) != (
                run.get("task.name"),
                run.get("model.name"),
            ):
                continue
            diff = {k: v for k, v in run.items() if flat.get(k, object()) != v}
            if best is None or (len(diff), name) < (best[0], best[1]):
                best = (len(diff), name, diff)
        return (best[1], best[2]) if best else (None, {})


def override(key: str, value: Any) -> str:
    """``key=value`` as ``genlab run`` reads it back: a string bare where it reads back as itself
    (``method.name=irm``), else a TOML literal."""
    from genlab.spec import parse_value

    text = value if isinstance(value, str) and value and parse_value(value) == value else None
    return f"{key}={text if text is not None else toml_literal(value)}"


def reproduce(run_id: str, spec: dict[str, Any], presets: Presets) -> dict[str, Any]:
    """The command that reproduces a run, checked: the nearest preset with overrides when they give
    the run's id (first without the params a changed component takes by default), else
    ``genlab run <id>.json`` (the spec file beside the run's page)."""
    from genlab.spec import apply_overrides, load_spec_file, parse_spec

    preset, diff = presets.nearest(spec) if not spec.get("imports") else (None, {})
    if preset is not None:
        changed = [c for c in ("task", "model", "method") if f"{c}.name" in diff]
        short = {
            k: v for k, v in diff.items() if not any(k.startswith(f"{c}.params.") for c in changed)
        }
        for keys in [short, diff] if short != diff else [diff]:
            overrides = [override(k, v) for k, v in keys.items()]
            try:
                again = parse_spec(apply_overrides(load_spec_file(preset), overrides))
            except Exception:  # noqa: BLE001 - overrides today's code rejects: the spec file
                continue
            if again.run_id == run_id:
                cmd = " ".join(["genlab run", preset, *map(shlex.quote, overrides)])
                return {"command": cmd, "preset": preset, "checked": True}
    try:
        same = parse_spec(json.loads(json.dumps(spec))).run_id == run_id
    except Exception:  # noqa: BLE001 - a spec today's code rejects (a plugin gone, a name renamed)
        same = False
    return {"command": f"genlab run {run_id}.json", "preset": preset, "checked": same, "file": True}


def _finite(v: Any) -> Any:
    return None if isinstance(v, float) and not math.isfinite(v) else v


def default_metric(finals: Iterable[dict[str, float]]) -> str | None:
    """The metric the runs table shows first: the most common ``test...:accuracy``, else the most
    common final metric."""
    counts = Counter(k for f in finals for k in f)
    tests = [k for k in counts if k.startswith("test") and k.endswith(":accuracy")]
    pool = tests or list(counts)
    return min(pool, key=lambda k: (-counts[k], k)) if pool else None


def membership(store: Store, data: SiteData) -> tuple[dict[str, list], dict[str, list]]:
    """Per run id: the sweeps ``(id, name)`` and the claims ``(claim, what, anchor)`` it is in."""
    sweeps: dict[str, list] = {}
    for sw in data.sweeps.itertuples():
        found = store.sweep(sw.sweep_id) or {"runs": []}
        for r in found["runs"]:
            sweeps.setdefault(r["run_id"], []).append((sw.sweep_id, sw.name))
    claims: dict[str, list] = {}
    for cid, recs in data.verdicts.items():
        for rec in recs:
            for rid in rec.run_ids:
                claims.setdefault(rid, []).append(
                    (cid, f"{rec.budget} verdict", f"verdict-{slug(rec.budget)}-{rec.config_id}")
                )
    controls = store.control_verdicts()
    for row in controls.itertuples():
        for rid in row.run_ids:
            claims.setdefault(rid, []).append(
                (row.claim_id, f"{row.control} control ({row.budget})", "verdicts")
            )
    return sweeps, claims


def _kinds(spec: dict[str, Any], sweeps: list, claims: list) -> list[str]:
    kinds = [
        k
        for k, on in (
            ("claim", any("verdict" in c[1] for c in claims)),
            ("control", any("control" in c[1] for c in claims)),
            ("sweep", bool(sweeps)),
        )
        if on
    ]
    kinds = kinds or ["single"]
    if spec.get("fed"):
        kinds.append("federated")
    if spec.get("steps") == 0:
        kinds.append("post-hoc")
    return kinds


def _metrics_table(final: dict[str, float]) -> Table | None:
    """Final metrics: one row per split, one column per metric."""
    if not final:
        return None
    rows: dict[str, dict[str, float]] = {}
    for key, value in final.items():
        split, _, metric = key.rpartition(":")
        rows.setdefault(split or "—", {})[metric] = value
    metrics = sorted({m for r in rows.values() for m in r})
    body = [[split, *(rows[split].get(m) for m in metrics)] for split in sorted(rows)]
    return Table(["split", *metrics], body, "final metrics (the last evaluation)", "metrics")


def write_runs(store: Store, data: SiteData, out: Path, site: dict[str, Any]) -> dict[str, Any]:
    """Write ``runs.html``, ``runs/<id>.html`` and ``runs/<id>.json`` (and each run's curves under
    ``figures/``); return what the index says of the runs (their count by kind)."""
    from genlab.browse import run_rows

    runs = store.runs()
    rows = run_rows(runs) if not runs.empty else []
    specs = {r["run_id"]: json.loads(r["spec"]) for r in runs.to_dict("records")}
    finals = {
        r["run_id"]: json.loads(r["summary"]).get("final", {}) if r["summary"] else {}
        for r in runs.to_dict("records")
    }
    in_sweeps, in_claims = membership(store, data)
    presets = Presets()
    metric = default_metric(finals.values())
    table = []
    for row in rows:
        rid = row["run_id"]
        spec, final = specs[rid], {k: _finite(v) for k, v in finals[rid].items()}
        sweeps, claims = in_sweeps.get(rid, []), in_claims.get(rid, [])
        kinds = _kinds(spec, sweeps, claims)
        how = reproduce(rid, spec, presets)
        figure = None
        curves = store.artifacts(rid).get("curves")
        if curves and Path(curves).is_file():
            figure = f"figures/run-{rid}.png"
            shutil.copyfile(curves, out / figure)
        (out / "runs" / f"{rid}.json").write_text(json.dumps(spec, indent=2), encoding="utf-8")
        error = (row.get("error") or "").strip().splitlines()
        (out / "runs" / f"{rid}.html").write_text(
            render(
                "site/run.html",
                **site,
                title=f"run {rid}",
                root="../",
                row=row,
                spec=spec,
                kinds=kinds,
                how=how,
                sweeps=sweeps,
                claims=claims,
                figure=figure,
                status_badge=STATUS_BADGE.get(row["status"], "not run"),
                error=error[-1] if error else "",
                metrics=_metrics_table(final),
                config=Table(
                    ["key", "value"],
                    [
                        [k, json.dumps(v) if isinstance(v, list | dict) else v]
                        for k, v in flatten(spec).items()
                    ],
                    "the run's spec (every setting, defaults included)",
                    "kv",
                ),
            ),
            encoding="utf-8",
        )
        table.append(
            {
                "row": row,
                "kinds": kinds,
                "preset": how["preset"] or "none",
                "metrics": json.dumps(final, allow_nan=False, sort_keys=True),
                "value": final.get(metric) if metric else None,
                "status_badge": STATUS_BADGE.get(row["status"], "not run"),
            }
        )
    keys = sorted({k for f in finals.values() for k in f})
    selects = [
        {"key": "kind", "label": "Kind", "options": sorted({k for t in table for k in t["kinds"]})},
        {"key": "preset", "label": "Preset", "options": sorted({t["preset"] for t in table})},
        {
            "key": "status",
            "label": "Status",
            "options": sorted({t["row"]["status"] for t in table}),
        },
        {
            "key": "method",
            "label": "Method",
            "options": sorted({str(t["row"]["method"]) for t in table}),
        },
    ]
    (out / "runs.html").write_text(
        render(
            "site/runs.html",
            **site,
            title="runs",
            root="",
            runs=table,
            selects=selects,
            metric=metric,
            metric_keys=keys,
        ),
        encoding="utf-8",
    )
    kinds = Counter(k for t in table for k in t["kinds"])
    return {"n": len(table), "kinds": sorted(kinds.items())}
